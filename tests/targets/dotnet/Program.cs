// allocs - a .NET program whose managed allocations are known, for
// heapscope's .nettrace tests (docs/dotnet.md).
//
// Usage: allocs [SCALE]   (SCALE multiplies every count; default 1)
//
// It allocates, from one method each and on the main thread:
//   Foo objects (four longs: 48 bytes each on 64-bit),
//   byte[200_000] arrays (large object heap: 200,024 bytes each),
//   strings of 100 chars (224 bytes each),
// calls GC.Collect() a known number of times, throws and catches a
// NullReferenceException (the runtime turns the SIGSEGV into it), and runs
// worker threads that spin and sleep. At the end it prints the truth it
// measured itself, one "key value" line each, for the tests to compare.
//
// With ALLOCS_GATE=PATH in its environment it prints "ready PID" and waits
// until PATH exists before it allocates, and until PATH.end exists before
// it exits (at most a minute each): the tests that attach to it use that.
using System;
using System.Runtime.CompilerServices;
using System.Threading;

namespace Allocs
{
    public sealed class Foo
    {
        public long A, B, C, D;
    }

    public static class Program
    {
        static object keep;

        [MethodImpl(MethodImplOptions.NoInlining)]
        static void AllocateFoos(int n)
        {
            for (int i = 0; i < n; i++) {
                var f = new Foo();
                f.A = i;
                keep = f;
            }
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static void AllocateLargeArrays(int n)
        {
            for (int i = 0; i < n; i++)
                keep = new byte[200_000];
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static void AllocateStrings(int n)
        {
            for (int i = 0; i < n; i++)
                keep = new string((char)('a' + i % 26), 100);
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static int Dereference(Foo f)
        {
            return (int)f.A;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static bool ThrowNullReference()
        {
            try {
                Dereference(null);
                return false;
            } catch (NullReferenceException) {
                return true;
            }
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static void Spin(object state)
        {
            long until = Environment.TickCount64 + (int)state;
            double x = 1;
            while (Environment.TickCount64 < until)
                for (int i = 0; i < 10000; i++)
                    x = x * 1.0000001 + 1e-9;
            Thread.Sleep(20);
            if (x == 0)
                Console.WriteLine("never");
        }

        static void WaitFor(string path)
        {
            for (int i = 0; i < 6000 && !System.IO.File.Exists(path); i++)
                Thread.Sleep(10);
        }

        static long Measure(Action a)
        {
            long before = GC.GetAllocatedBytesForCurrentThread();
            a();
            return GC.GetAllocatedBytesForCurrentThread() - before;
        }

        public static int Main(string[] args)
        {
            int scale = args.Length > 0 ? int.Parse(args[0]) : 1;
            int foos = 50_000 * scale, arrays = 10 * scale, strings = 10_000 * scale;
            int collects = 3;
            var workers = new Thread[3];
            string gate = Environment.GetEnvironmentVariable("ALLOCS_GATE");

            if (gate != null) {
                Console.WriteLine("ready " + Environment.ProcessId);
                WaitFor(gate);
            }

            for (int i = 0; i < workers.Length; i++) {
                workers[i] = new Thread(Spin) { Name = "spinner" + i };
                workers[i].Start(100);
            }
            long fooBytes = Measure(() => AllocateFoos(foos));
            long arrayBytes = Measure(() => AllocateLargeArrays(arrays));
            long stringBytes = Measure(() => AllocateStrings(strings));
            int gcBefore = GC.CollectionCount(0);
            for (int i = 0; i < collects; i++)
                GC.Collect();
            bool caught = ThrowNullReference();
            foreach (var t in workers)
                t.Join();

            Console.WriteLine("foo_count " + foos);
            Console.WriteLine("foo_bytes " + fooBytes);
            Console.WriteLine("array_count " + arrays);
            Console.WriteLine("array_bytes " + arrayBytes);
            Console.WriteLine("string_count " + strings);
            Console.WriteLine("string_bytes " + stringBytes);
            Console.WriteLine("collects " + collects);
            Console.WriteLine("gc_count_before_collects " + gcBefore);
            Console.WriteLine("gc_count " + GC.CollectionCount(0));
            Console.WriteLine("caught " + (caught ? 1 : 0));
            if (gate != null)
                WaitFor(gate + ".end");
            return caught ? 0 : 1;
        }
    }
}
