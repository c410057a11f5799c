using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Threading;

namespace Nnrt.Tests
{
    /// <summary>Training a small classifier: fit, step, the progress callback, cancel, datasets.</summary>
    public static class TrainingTests
    {
        private static Context Ctx { get { return Fixtures.Context; } }

        /// <summary>Fitting the blob task lowers the loss epoch by epoch and raises the accuracy from
        /// chance to nearly all right.</summary>
        [Test]
        public static void FitLowersLossAndRaisesAccuracy()
        {
            using (var train = Fixtures.BlobDataset(Ctx, 600, 1))
            using (var validation = Fixtures.BlobDataset(Ctx, 300, 2))
            using (var model = new Model(Ctx, Fixtures.BlobModel))
            using (var trainer = new Trainer(model, Fixtures.BlobTrainer))
            {
                double before;
                using (var evaluation = model.Evaluate(validation)) before = evaluation.Accuracy;

                var epochLosses = new List<List<double>>();
                var scores = new List<double>();
                trainer.SetProgress(p =>
                {
                    if (p.EpochEnd)
                    {
                        scores.Add(p.ValidationScore);
                    }
                    else
                    {
                        while (epochLosses.Count <= p.Epoch) epochLosses.Add(new List<double>());
                        epochLosses[p.Epoch].Add(p.Loss);
                        Assert.Equal(19L, p.BatchesPerEpoch, "batches per epoch (600 / 32, rounded up)");
                        Assert.Equal(-1, p.DeviceUtilizationPercent, "a CPU backend reports no device load");
                        Assert.Equal(-1L, p.DeviceMemoryTotalBytes, "a CPU backend reports no device memory");
                    }
                    return false;
                });
                trainer.Fit(train, validation, 4);

                Assert.Equal(4, epochLosses.Count, "epochs reported");
                Assert.Equal(4, scores.Count, "validation scores");
                double first = epochLosses[0].Average(), last = epochLosses[3].Average();
                Assert.True(last < first * 0.5, string.Format("mean loss fell from {0:F4} to {1:F4}", first, last));
                using (var evaluation = model.Evaluate(validation))
                {
                    double after = evaluation.Accuracy;
                    Assert.True(after > 0.9 && after > before + 0.3,
                                string.Format("accuracy went from {0:F3} to {1:F3}", before, after));
                    Assert.True(Math.Abs(scores.Last() - after) < 1e-9, "the last validation score is the accuracy");
                    string report = evaluation.Report();
                    Assert.Equal(300.0, Fixtures.JsonNumber(report, "examples"), "report examples");
                    Assert.Equal(3.0, Fixtures.JsonNumber(report, "classes"), "report classes");
                    Assert.Contains("\"confusion_matrix\"", report, "report");
                }
                string result = trainer.Result();
                Assert.Equal("completed", Fixtures.JsonField(result, "stop_reason"), "stop reason");
                Assert.Equal(4.0, Fixtures.JsonNumber(result, "epochs"), "epochs in the result");
                Assert.Equal(76.0, Fixtures.JsonNumber(result, "iterations"), "iterations in the result");
            }
        }

        /// <summary>Repeated steps on one minibatch lower its loss; a step without a callback works.</summary>
        [Test]
        public static void StepLowersLoss()
        {
            float[] x;
            long[] y;
            Fixtures.Blobs(64, 3, out x, out y);
            using (var model = new Model(Ctx, Fixtures.BlobModel))
            using (var trainer = new Trainer(model, "{\"optimizer\": {\"type\": \"sgd\", \"learning_rate\": 0.1, \"momentum\": 0.9}}"))
            using (var features = NdArray.FromHost(Ctx, x, 64, 2))
            using (var labels = NdArray.FromHost(Ctx, y.Select(v => (int)v).ToArray(), 64))
            {
                var losses = Enumerable.Range(0, 30).Select(i => trainer.Step(features, labels)).ToList();
                Assert.True(losses.Last() < losses.First() * 0.5,
                            string.Format("loss fell from {0:F4} to {1:F4}", losses.First(), losses.Last()));
            }
        }

        /// <summary>A callback returning true stops training normally, with stop reason "callback".</summary>
        [Test]
        public static void CallbackCanStopTraining()
        {
            using (var train = Fixtures.BlobDataset(Ctx, 320, 4))
            using (var model = new Model(Ctx, Fixtures.BlobModel))
            using (var trainer = new Trainer(model, Fixtures.BlobTrainer))
            {
                int calls = 0;
                trainer.SetProgress(p => ++calls == 3);
                trainer.Fit(train, 50);
                Assert.Equal(3, calls, "callback calls");
                string result = trainer.Result();
                Assert.Equal("callback", Fixtures.JsonField(result, "stop_reason"), "stop reason");
                trainer.SetProgress(null);
                trainer.Fit(train, 1); // continues without the callback
                Assert.Equal("completed", Fixtures.JsonField(trainer.Result(), "stop_reason"), "after removing it");
            }
        }

        /// <summary>An exception thrown by the callback stops training and comes out of Fit unchanged.</summary>
        [Test]
        public static void CallbackExceptionComesOutOfFit()
        {
            using (var train = Fixtures.BlobDataset(Ctx, 320, 4))
            using (var model = new Model(Ctx, Fixtures.BlobModel))
            using (var trainer = new Trainer(model, Fixtures.BlobTrainer))
            {
                trainer.SetProgress(p => { throw new InvalidDataException("stop at batch " + p.Batch); });
                var e = Assert.Throws<InvalidDataException>(() => trainer.Fit(train, 5), "fit");
                Assert.Equal("stop at batch 0", e.Message, "the callback's exception");
                // Calling the trainer from its own callback is refused, not undefined behaviour.
                trainer.SetProgress(p => { trainer.Result(); return false; });
                Assert.Throws<InvalidOperationException>(() => trainer.Fit(train, 1), "re-entrant call");
            }
        }

        /// <summary>Cancel from another thread stops a running fit, which throws Cancelled.</summary>
        [Test]
        public static void CancelFromAnotherThread()
        {
            using (var train = Fixtures.BlobDataset(Ctx, 320, 5))
            using (var model = new Model(Ctx, Fixtures.BlobModel))
            using (var trainer = new Trainer(model, Fixtures.BlobTrainer))
            using (var running = new ManualResetEventSlim())
            {
                trainer.SetProgress(p => { running.Set(); return false; });
                var canceller = new Thread(() =>
                {
                    if (running.Wait(TimeSpan.FromSeconds(60))) trainer.Cancel();
                });
                canceller.Start();
                Assert.Fails(Status.Cancelled, () => trainer.Fit(train, 100000), "fit");
                canceller.Join();
                Assert.Equal("cancelled", Fixtures.JsonField(trainer.Result(), "stop_reason"), "stop reason");
            }
        }

        /// <summary>A cancel before fit makes the next fit stop at once.</summary>
        [Test]
        public static void CancelBeforeFit()
        {
            using (var train = Fixtures.BlobDataset(Ctx, 64, 5))
            using (var model = new Model(Ctx, Fixtures.BlobModel))
            using (var trainer = new Trainer(model, Fixtures.BlobTrainer))
            {
                trainer.Cancel();
                Assert.Fails(Status.Cancelled, () => trainer.Fit(train, 1000), "fit after cancel");
            }
        }

        /// <summary>While one thread fits, another thread's call on the trainer is refused; Cancel works.</summary>
        [Test]
        public static void TrainerIsUsedByOneThreadAtATime()
        {
            using (var train = Fixtures.BlobDataset(Ctx, 320, 6))
            using (var model = new Model(Ctx, Fixtures.BlobModel))
            using (var trainer = new Trainer(model, Fixtures.BlobTrainer))
            using (var running = new ManualResetEventSlim())
            {
                trainer.SetProgress(p => { running.Set(); return false; });
                Exception refused = null;
                var other = new Thread(() =>
                {
                    running.Wait(TimeSpan.FromSeconds(60));
                    try { trainer.Result(); } catch (Exception e) { refused = e; }
                    trainer.Cancel();
                });
                other.Start();
                Assert.Fails(Status.Cancelled, () => trainer.Fit(train, 100000), "fit");
                other.Join();
                Assert.True(refused is InvalidOperationException, "the concurrent call got " + refused);
            }
        }

        /// <summary>Float targets train a regression, evaluated with MSE instead of accuracy.</summary>
        [Test]
        public static void RegressionWithFloatTargets()
        {
            const int n = 256;
            var random = new Random(9);
            var x = new float[n * 2];
            var y = new float[n];
            for (int i = 0; i < n; i++)
            {
                x[2 * i] = (float)random.NextDouble();
                x[2 * i + 1] = (float)random.NextDouble();
                y[i] = 2 * x[2 * i] - x[2 * i + 1] + 0.5f;
            }
            const string config = @"{""input"": [2], ""seed"": 1, ""layers"": [
                {""type"": ""output"", ""units"": 1, ""activation"": ""identity"", ""loss"": ""mse""}]}";
            using (var features = NdArray.FromHost(Ctx, x, n, 2))
            using (var targets = NdArray.FromHost(Ctx, y, n, 1))
            using (var data = Dataset.FromArrays(Ctx, features, targets))
            using (var model = new Model(Ctx, config))
            using (var trainer = new Trainer(model, "{\"optimizer\": {\"type\": \"adam\", \"learning_rate\": 0.05}, \"batch_size\": 16}"))
            {
                double before;
                using (var e = model.Evaluate(data)) before = Fixtures.JsonNumber(e.Report(), "mse");
                trainer.Fit(train: data, validation: data, epochs: 10);
                using (var e = model.Evaluate(data))
                {
                    Assert.True(double.IsNaN(e.Accuracy), "a regression has no accuracy");
                    double after = Fixtures.JsonNumber(e.Report(), "mse");
                    Assert.True(after < before * 0.1 && after < 0.05, string.Format("mse fell from {0} to {1}", before, after));
                }
            }
        }

        /// <summary>A CSV dataset: its size, and its examples as arrays.</summary>
        [Test]
        public static void CsvDataset()
        {
            string dir = Fixtures.TempDir();
            try
            {
                string path = Path.Combine(dir, "data.csv");
                File.WriteAllText(path, "x,y,label\n1,2,0\n3,4,1\n5,6,2\n7,8,1\n");
                using (var data = Dataset.LoadCsv(Ctx, path, labelColumn: -1, header: true))
                {
                    Assert.Equal(4L, data.Count, "examples");
                    NdArray labels;
                    using (var features = data.Examples(Ctx, 1, 3, out labels))
                    using (labels)
                    {
                        Assert.Sequence(new long[] { 3, 2 }, features.Shape, "features shape");
                        Assert.Sequence(new[] { 3f, 4f, 5f, 6f, 7f, 8f }, features.ToFloatArray(), "features");
                        Assert.Equal(DType.I64, labels.DType, "labels dtype");
                        Assert.Sequence(new long[] { 1, 2, 1 }, labels.ToInt64Array(), "labels");
                    }
                    using (var features = data.Features(Ctx, 0, 1))
                        Assert.Sequence(new[] { 1f, 2f }, features.ToFloatArray(), "features only");
                }
                using (var data = Dataset.LoadCsv(Ctx, path, labelColumn: 2, header: true, limit: 2))
                    Assert.Equal(2L, data.Count, "limited examples");
            }
            finally
            {
                Directory.Delete(dir, true);
            }
        }

        /// <summary>An IDX dataset (the MNIST format) written here: bytes scaled into features.</summary>
        [Test]
        public static void IdxDataset()
        {
            string dir = Fixtures.TempDir();
            try
            {
                string images = Path.Combine(dir, "images.idx"), labels = Path.Combine(dir, "labels.idx");
                File.WriteAllBytes(images, Idx(0x0803, new[] { 3, 2, 2 }, new byte[] { 0, 51, 102, 255, 1, 2, 3, 4, 5, 6, 7, 8 }));
                File.WriteAllBytes(labels, Idx(0x0801, new[] { 3 }, new byte[] { 9, 0, 4 }));
                using (var data = Dataset.LoadIdx(Ctx, images, labels, scale: 1.0))
                {
                    Assert.Equal(3L, data.Count, "examples");
                    NdArray y;
                    using (var x = data.Examples(Ctx, 0, 3, out y))
                    using (y)
                    {
                        Assert.Equal(12L, x.ElementCount, "feature elements");
                        Assert.Sequence(new[] { 0f, 51f, 102f, 255f }, x.ToFloatArray().Take(4), "first image");
                        Assert.Sequence(new long[] { 9, 0, 4 }, y.ToInt64Array(), "labels");
                    }
                }
                using (var data = Dataset.LoadIdx(Ctx, images, labels, limit: 2))
                using (var x = data.Features(Ctx, 0, 1))
                {
                    float[] scaled = x.ToFloatArray();
                    var expected = new[] { 0f, 0.2f, 0.4f, 1f };
                    for (int i = 0; i < 4; i++)
                        Assert.True(Math.Abs(scaled[i] - expected[i]) < 1e-6, "scaled by 1/255: " + string.Join(", ", scaled));
                }
            }
            finally
            {
                Directory.Delete(dir, true);
            }
        }

        /// <summary>An IDX file: a big-endian magic number, the dimensions, then the bytes.</summary>
        private static byte[] Idx(int magic, int[] dims, byte[] data)
        {
            var bytes = new List<byte>();
            foreach (int v in new[] { magic }.Concat(dims))
                bytes.AddRange(new[] { (byte)(v >> 24), (byte)(v >> 16), (byte)(v >> 8), (byte)v });
            bytes.AddRange(data);
            return bytes.ToArray();
        }
    }
}
