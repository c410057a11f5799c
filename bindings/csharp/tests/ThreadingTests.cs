using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Linq;
using System.Threading;

namespace Nnrt.Tests
{
    /// <summary>What the C API allows to share: contexts and models across threads, arrays for reading.</summary>
    public static class ThreadingTests
    {
        private static void OnThreads(int count, Action<int> body)
        {
            var problems = new ConcurrentQueue<Exception>();
            var threads = Enumerable.Range(0, count).Select(i => new Thread(() =>
            {
                try { body(i); } catch (Exception e) { problems.Enqueue(e); }
            })).ToList();
            threads.ForEach(t => t.Start());
            threads.ForEach(t => t.Join());
            Exception first;
            if (problems.TryPeek(out first)) throw new AssertionException(problems.Count + " thread(s) failed; first: " + first);
        }

        /// <summary>One context runs ops from many threads with exact results.</summary>
        [Test]
        public static void SharedContextRunsOpsEverywhere()
        {
            var ctx = Fixtures.Context;
            OnThreads(8, id =>
            {
                var values = Enumerable.Range(0, 64).Select(v => (float)(id * 100 + v)).ToArray();
                for (int round = 0; round < 20; round++)
                {
                    using (var a = NdArray.FromHost(ctx, values, 8, 8))
                    using (var s = a + a)
                    using (var m = a.MatMul(a))
                    {
                        Assert.Sequence(values.Select(v => 2 * v), s.ToFloatArray(), "sum");
                        Assert.Sequence(new long[] { 8, 8 }, m.Shape, "product shape");
                    }
                }
            });
        }

        /// <summary>Many threads read one array at once.</summary>
        [Test]
        public static void ArrayReadFromManyThreads()
        {
            var values = Enumerable.Range(0, 1000).Select(v => (long)v * v).ToArray();
            using (var a = NdArray.FromHost(Fixtures.Context, values, 1000))
                OnThreads(16, id =>
                {
                    for (int round = 0; round < 20; round++) Assert.Sequence(values, a.ToInt64Array(), "read");
                });
        }

        /// <summary>One model predicts on many threads while another thread trains it.</summary>
        [Test]
        public static void SharedModelPredictsWhileTraining()
        {
            var ctx = Fixtures.Context;
            float[] x;
            long[] y;
            Fixtures.Blobs(40, 21, out x, out y);
            using (var model = new Model(ctx, Fixtures.BlobModel))
            using (var data = Fixtures.BlobDataset(ctx, 600, 22))
            using (var trainer = new Trainer(model, Fixtures.BlobTrainer))
            using (var input = NdArray.FromHost(ctx, x, 40, 2))
            {
                float[] reference;
                using (var p = model.Predict(input)) reference = p.ToFloatArray();
                OnThreads(6, id =>
                {
                    for (int round = 0; round < 10; round++)
                        using (var p = model.Predict(input))
                            Assert.Sequence(reference, p.ToFloatArray(), "same prediction on every thread");
                });
                // Every state the weights pass through, predicted on one thread at a time: before
                // training, and after each minibatch from the progress callback, which runs between
                // steps on the training thread.
                var states = new List<float[]> { reference };
                trainer.SetProgress(progress =>
                {
                    using (var p = model.Predict(input))
                    {
                        float[] state = p.ToFloatArray();
                        lock (states) states.Add(state);
                    }
                    return false;
                });
                var trained = new ManualResetEventSlim();
                Exception trainingError = null;
                var trainerThread = new Thread(() =>
                {
                    try { trainer.Fit(data, 3); }
                    catch (Exception e) { trainingError = e; }
                    finally { trained.Set(); }
                });
                var seen = new ConcurrentBag<float[]>();
                trainerThread.Start();
                OnThreads(4, id =>
                {
                    do
                    {
                        using (var p = model.Predict(input)) seen.Add(p.ToFloatArray());
                    } while (!trained.IsSet);
                });
                trainerThread.Join();
                Assert.True(trainingError == null, "training failed: " + trainingError);
                Assert.True(states.Count > 3 * (600 / 32), states.Count + " states recorded");
                Assert.True(!states[0].SequenceEqual(states[states.Count - 1]), "training changed the predictions");
                // Each prediction made during training is one of those states, exactly: no torn weights.
                foreach (float[] p in seen)
                    Assert.True(states.Any(state => state.SequenceEqual(p)),
                                "a prediction during training matches no state the weights passed through");
            }
        }
    }
}
