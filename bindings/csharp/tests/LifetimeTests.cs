using System;
using System.IO;
using System.Threading;

namespace Nnrt.Tests
{
    /// <summary>Objects released in any order, by Dispose or by the garbage collector.</summary>
    public static class LifetimeTests
    {
        /// <summary>A context disposed before its arrays, models and datasets leaves them usable.</summary>
        [Test]
        public static void ContextBeforeItsObjects()
        {
            var context = new Context();
            var a = NdArray.FromHost(context, new[] { 1f, 2f }, 2);
            var b = a + a;
            var model = new Model(context, Fixtures.BlobModel);
            var data = Fixtures.BlobDataset(context, 30, 1);
            context.Dispose();

            Assert.Sequence(new[] { 2f, 4f }, b.ToFloatArray(), "an array after its context");
            using (var x = data.Features(Fixtures.Context, 0, 2))
            using (var p = model.Predict(x))
                Assert.Sequence(new long[] { 2, 3 }, p.Shape, "a model after its context");
            using (var e = model.Evaluate(data))
                Assert.True(e.Accuracy >= 0, "evaluate after the context");
            // The managed context object is gone, so ops through it are refused, not undefined.
            Assert.Throws<ObjectDisposedException>(() => (a + a).Dispose(), "an op through a disposed context");
            a.Dispose();
            b.Dispose();
            model.Dispose();
            data.Dispose();
        }

        /// <summary>A model disposed before its trainer: the trainer keeps it alive and can still train
        /// and save it.</summary>
        [Test]
        public static void ModelBeforeItsTrainer()
        {
            string dir = Fixtures.TempDir();
            try
            {
                var model = new Model(Fixtures.Context, Fixtures.BlobModel);
                var trainer = new Trainer(model, Fixtures.BlobTrainer);
                var data = Fixtures.BlobDataset(Fixtures.Context, 64, 2);
                model.Dispose();
                data.Dispose(); // ...and the dataset too: the native side holds what the call needs
                Assert.Throws<ObjectDisposedException>(() => trainer.Fit(data, 1), "fit with a disposed dataset");
                using (var again = Fixtures.BlobDataset(Fixtures.Context, 64, 2)) trainer.Fit(again, 2);
                string path = Path.Combine(dir, "m.safetensors");
                trainer.Save(path);
                trainer.Dispose();
                using (var loaded = Model.Load(Fixtures.Context, path))
                    Assert.Equal(99L, loaded.ParamCount, "saved through the trainer");
            }
            finally
            {
                Directory.Delete(dir, true);
            }
        }

        /// <summary>Disposing a trainer while another thread fits cancels that fit; the native trainer is
        /// released only when the fit has returned.</summary>
        [Test]
        public static void TrainerDisposedDuringFit()
        {
            using (var data = Fixtures.BlobDataset(Fixtures.Context, 320, 3))
            using (var model = new Model(Fixtures.Context, Fixtures.BlobModel))
            using (var running = new ManualResetEventSlim())
            {
                var trainer = new Trainer(model, Fixtures.BlobTrainer);
                trainer.SetProgress(p => { running.Set(); return false; });
                Exception outcome = null;
                var fitting = new Thread(() =>
                {
                    try { trainer.Fit(data, 100000); } catch (Exception e) { outcome = e; }
                });
                fitting.Start();
                Assert.True(running.Wait(TimeSpan.FromSeconds(60)), "fit did not start");
                trainer.Dispose();
                Assert.True(fitting.Join(TimeSpan.FromSeconds(60)), "fit did not stop");
                var cancelled = outcome as NnrtException;
                Assert.True(cancelled != null && cancelled.Status == Status.Cancelled, "fit ended with " + outcome);
                Assert.True(trainer.Handle.IsClosed, "handle closed");
            }
        }

        /// <summary>Objects never disposed are released by their finalizers, in whatever order they run.</summary>
        [Test]
        public static void FinalizersReleaseInAnyOrder()
        {
            for (int i = 0; i < 20; i++) Abandon(i);
            GC.Collect();
            GC.WaitForPendingFinalizers();
            GC.Collect();
            GC.WaitForPendingFinalizers();
        }

        private static void Abandon(int seed)
        {
            var context = new Context("{\"threads\": 1}");
            var model = new Model(context, Fixtures.BlobModel);
            var trainer = new Trainer(model, Fixtures.BlobTrainer);
            var data = Fixtures.BlobDataset(context, 32, seed);
            trainer.Fit(data, 1);
            var evaluation = model.Evaluate(data);
            var sum = NdArray.FromHost(context, new[] { 1.0 }, 1) + NdArray.FromHost(context, new[] { 2.0 }, 1);
            Assert.Equal(3.0, sum.ToDoubleArray()[0], "sum");
            GC.KeepAlive(evaluation);
        }
    }
}
