// A small offline test runner: finds every static method marked [Test] in this assembly, runs them
// one after another, prints one line per test and closes with "N passed, N failed". The exit code
// is 1 if anything failed, so a missing library fails the suite instead of skipping it.
//
//   mono NnrtTests.exe [name filter ...]     run the tests whose Class.Method contains a filter
//   mono NnrtTests.exe --probe-library       load libnnrt and check its ABI; exit 0 or 1
using System;
using System.Diagnostics;
using System.Linq;
using System.Reflection;
using Nnrt;

namespace Nnrt.Tests
{
    /// <summary>Marks a public static method without parameters as a test.</summary>
    [AttributeUsage(AttributeTargets.Method)]
    public sealed class TestAttribute : Attribute { }

    /// <summary>Discovers and runs the tests.</summary>
    public static class Runner
    {
        /// <summary>Runs the tests; returns 0 when all passed.</summary>
        public static int Main(string[] args)
        {
            if (args.Length == 1 && args[0] == "--probe-library") return ProbeLibrary();

            var tests = typeof(Runner).Assembly.GetTypes()
                .SelectMany(t => t.GetMethods(BindingFlags.Public | BindingFlags.Static))
                .Where(m => m.IsDefined(typeof(TestAttribute), false))
                .OrderBy(m => m.DeclaringType.Name, StringComparer.Ordinal)
                .ThenBy(m => m.MetadataToken)
                .Where(m => args.Length == 0 || args.Any(f => Name(m).Contains(f)))
                .ToList();

            // A library that cannot be loaded fails every test: say why once and count them all as
            // failed, rather than printing the same stack trace for each.
            try
            {
                Library.EnsureCompatible();
                Console.WriteLine("libnnrt {0} (ABI {1})", Library.Version, Library.AbiVersion);
            }
            catch (Exception e)
            {
                Console.WriteLine("error: " + e.Message);
                Console.WriteLine("0 passed, {0} failed", tests.Count);
                return 1;
            }

            int passed = 0, failed = 0;
            var total = Stopwatch.StartNew();
            foreach (var test in tests)
            {
                var clock = Stopwatch.StartNew();
                try
                {
                    test.Invoke(null, null);
                    passed++;
                    Console.WriteLine("PASS {0} ({1} ms)", Name(test), clock.ElapsedMilliseconds);
                }
                catch (TargetInvocationException e)
                {
                    failed++;
                    Console.WriteLine("FAIL {0} ({1} ms): {2}", Name(test), clock.ElapsedMilliseconds, e.InnerException);
                }
            }
            // Objects the tests left to the garbage collector are released here, in whatever order the
            // finalizers run; a crash now would be a release-order bug.
            GC.Collect();
            GC.WaitForPendingFinalizers();
            Console.WriteLine("ran {0} tests in {1:F1} s", tests.Count, total.Elapsed.TotalSeconds);
            Console.WriteLine("{0} passed, {1} failed", passed, failed);
            // The line scripts/test_summary.py reads (the runner has no skipped tests).
            Console.WriteLine("nnrt-test-counts: passed={0} failed={1} skipped=0", passed, failed);
            return failed == 0 && passed > 0 ? 0 : 1;
        }

        private static string Name(MethodInfo m) { return m.DeclaringType.Name + "." + m.Name; }

        // The child side of LibraryTests.MissingLibraryFailsLoudly.
        private static int ProbeLibrary()
        {
            try
            {
                Library.EnsureCompatible();
                Console.WriteLine("loaded libnnrt " + Library.Version);
                return 0;
            }
            catch (Exception e)
            {
                Console.Error.WriteLine(e.GetType().Name + ": " + e.Message);
                return 1;
            }
        }
    }
}
