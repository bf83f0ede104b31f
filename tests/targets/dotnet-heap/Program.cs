// dotnet-heap - a process whose heap holds a known graph, for heapscope's
// .gcdump tests (tests/data/dotnet/heap.md says how the fixtures were made):
//   - HeapFixture.Nodes: a static List<Node> of 1,000 Node objects, each
//     holding its own byte[1000] (Payload);
//   - a Cache (a Dictionary<int, CacheEntry> of 100 entries, each with a
//     byte[500]) reachable only through a GCHandle.Alloc(Normal) handle;
//   - 500 Garbage objects, each with a byte[2000], dropped and collected
//     before the snapshot: none may appear in it.
// It prints "ready PID" and waits for a line on standard input (or for the
// file named by its first argument to exist) so that the snapshot is taken
// while everything above is alive. A second argument changes the number of
// nodes (a second snapshot for `heapscope diff`); a third is Main's return
// value (`run --gcdump-at-exit` keeps it). Main frees the cache's handle
// before it returns: a snapshot taken after that holds no CacheEntry.
using System;
using System.Collections.Generic;
using System.IO;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Threading;

sealed class Node
{
    public int Id;
    public byte[] Payload;
}

sealed class CacheEntry
{
    public byte[] Data;
}

sealed class Garbage
{
    public byte[] Junk;
}

static class HeapFixture
{
    public static List<Node> Nodes = new List<Node>();

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void MakeGarbage()
    {
        var dropped = new List<Garbage>();
        for (int i = 0; i < 500; i++)
            dropped.Add(new Garbage { Junk = new byte[2000] });
        GC.KeepAlive(dropped);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static GCHandle MakeCache()
    {
        var cache = new Dictionary<int, CacheEntry>();
        for (int i = 0; i < 100; i++)
            cache[i] = new CacheEntry { Data = new byte[500] };
        return GCHandle.Alloc(cache, GCHandleType.Normal);
    }

    // In a method of its own, so that no local of Main still holds a node
    // and the list alone retains them all.
    [MethodImpl(MethodImplOptions.NoInlining)]
    static void MakeNodes(int nodes)
    {
        for (int i = 0; i < nodes; i++)
            Nodes.Add(new Node { Id = i, Payload = new byte[1000] });
    }

    static int Main(string[] args)
    {
        MakeNodes(args.Length > 1 ? int.Parse(args[1]) : 1000);
        GCHandle cache = MakeCache();
        MakeGarbage();
        GC.Collect();
        GC.WaitForPendingFinalizers();
        GC.Collect();
        Console.WriteLine("ready " + Environment.ProcessId);
        Console.Out.Flush();
        if (args.Length > 0)
            while (!File.Exists(args[0]))
                Thread.Sleep(50);
        else
            Console.ReadLine();
        GC.KeepAlive(Nodes);
        cache.Free();
        return args.Length > 2 ? int.Parse(args[2]) : 0;
    }
}
