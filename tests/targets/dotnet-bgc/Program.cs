// bgc - a .NET program whose garbage collections are known, for
// heapscope's GCStats tests: it keeps a few MB alive in gen2, asks for
// background GCs (GC.Collect(2, Forced, blocking: false)) and allocates
// while each runs, so that the runtime also does ephemeral GCs meanwhile.
// It prints GC.CollectionCount of each generation at the end.
//
// tests/data/dotnet/bgc.nettrace.zip was recorded with a 1 MB gen0 budget
// (so that gen0 GCs run while the background GCs mark):
//   DOTNET_GCgen0size=100000 DOTNET_EnableEventPipe=1
//   DOTNET_EventPipeOutputPath=bgc.nettrace
//   DOTNET_EventPipeConfig=Microsoft-Windows-DotNETRuntime:0x1:5
//   dotnet bgc.dll 3 > bgc.truth
using System;
using System.Collections.Generic;
using System.Runtime;
using System.Threading;

namespace Bgc
{
    public static class Program
    {
        static readonly List<byte[]> keep = new List<byte[]>();
        static object sink;

        public static int Main(string[] args)
        {
            int rounds = args.Length > 0 ? int.Parse(args[0]) : 3;
            for (int i = 0; i < 4000; i++)
                keep.Add(new byte[1000]);
            GC.Collect();
            GC.Collect();
            for (int r = 0; r < rounds; r++) {
                GC.Collect(2, GCCollectionMode.Forced, false, false);
                for (int i = 0; i < 200_000; i++)
                    sink = new byte[100];
                Thread.Sleep(50);
            }
            Console.WriteLine("concurrent " + (GCSettings.IsServerGC ? "server" : GCSettings.LatencyMode.ToString()));
            Console.WriteLine("gen0 " + GC.CollectionCount(0));
            Console.WriteLine("gen1 " + GC.CollectionCount(1));
            Console.WriteLine("gen2 " + GC.CollectionCount(2));
            GC.KeepAlive(sink);
            return 0;
        }
    }
}
