using System;
using System.IO;
using System.Linq;
using System.Threading;

namespace Nnrt.Tests
{
    /// <summary>Predictions from and into the caller's own memory (PredictInto over spans), and calls
    /// stopped by <see cref="RunOptions"/>: cancelled, past a timeout, by an abort callback, from
    /// another thread.</summary>
    public static class EmbeddingTests
    {
        private static Context Ctx { get { return Fixtures.Context; } }

        // 8 dense layers: a pass of many ops, each checked against the run options before it runs.
        private static readonly string Deep = "{\"input\": [2], \"seed\": 3, \"layers\": [" +
            string.Join(", ", Enumerable.Range(0, 7).Select(i =>
                "{\"type\": \"dense\", \"units\": 8, \"activation\": \"" + (i % 2 == 0 ? "tanh" : "relu") + "\"}")) +
            ", {\"type\": \"output\", \"units\": 3, \"activation\": \"softmax\", \"loss\": \"nll\"}]}";

        private static float[] Batch(int n, int seed)
        {
            float[] x;
            long[] y;
            Fixtures.Blobs(n, seed, out x, out y);
            return x;
        }

        // The prediction of a copy of x made into an nnrt array: no memory lent.
        private static float[] Reference(Model model, float[] x, int n)
        {
            using (var input = NdArray.FromHost(Ctx, x, n, 2))
            using (var output = model.Predict(input))
                return output.ToFloatArray();
        }

        // Whether the shared context's backend keeps arrays in host memory, so that nnrt can use the
        // caller's (on a GPU the binding copies, and what the in-place tests watch cannot happen).
        private static bool LendsHostMemory()
        {
            string backend = Fixtures.JsonField(Ctx.Describe(), "backend");
            bool host = backend == "reference" || backend == "onednn";
            if (!host) Console.WriteLine("  (the {0} backend keeps no arrays in host memory: in-place checks skipped)", backend);
            return host;
        }

        /// <summary>Shared models predict alike; setting a parameter of one copies its parameters first,
        /// so the others never see it, also after the original is disposed.</summary>
        [Test]
        public static void SharedModelsCopyParametersOnWrite()
        {
            float[] x = Batch(8, 4);
            var model = new Model(Ctx, Fixtures.BlobModel);
            float[] before = Reference(model, x, 8);
            using (var shared = model.Share())
            using (var twice = shared.Share())
            using (var bias = NdArray.FromHost(Ctx, new float[] { 1, -2, 3 }, 3))
            {
                Assert.Sequence(before, Reference(twice, x, 8), "a model shared twice");
                shared.SetParam("layer1.bias", bias);
                Assert.True(!before.SequenceEqual(Reference(shared, x, 8)), "the set changed the model it was made on");
                Assert.Sequence(before, Reference(model, x, 8), "the original after a sharer's set");
                model.Dispose();
                Assert.Sequence(before, Reference(twice, x, 8), "a sharer after the original's disposal");
            }
        }

        /// <summary>OutputShape gives the batch and the output layer's shape.</summary>
        [Test]
        public static void OutputShapeOfABatch()
        {
            using (var model = new Model(Ctx, Fixtures.BlobModel))
            {
                Assert.Sequence(new long[] { 5, 3 }, model.OutputShape(5), "batch of 5");
                Assert.Sequence(new long[] { 0, 3 }, model.OutputShape(0), "batch of 0");
                Assert.Fails(Status.InvalidArgument, () => model.OutputShape(-1), "negative batch");
            }
        }

        /// <summary>PredictInto writes exactly what Predict returns, when it records the plan and when it
        /// replays it.</summary>
        [Test]
        public static void PredictIntoGivesTheNumbersOfPredict()
        {
            using (var model = new Model(Ctx, Fixtures.BlobModel))
            {
                var x = Batch(6, 1);
                var y = new float[6 * 3];
                for (int round = 0; round < 2; round++)
                {
                    for (int i = 0; i < y.Length; i++) y[i] = float.NaN;
                    model.PredictInto(x, new long[] { 6, 2 }, y);
                    Assert.Sequence(Reference(model, x, 6), y, "round " + round);
                }
            }
        }

        /// <summary>Changing the input array in place and predicting again changes the result.</summary>
        [Test]
        public static void ChangingTheInputChangesTheNextPrediction()
        {
            using (var model = new Model(Ctx, Fixtures.BlobModel))
            {
                var x = Batch(5, 2);
                var y = new float[5 * 3];
                model.PredictInto(x, new long[] { 5, 2 }, y);
                var first = (float[])y.Clone();
                for (int i = 0; i < x.Length; i++) x[i] = -2 * x[i] + 0.25f;
                model.PredictInto(x, new long[] { 5, 2 }, y);
                Assert.True(!first.SequenceEqual(y), "the prediction did not change");
                Assert.Sequence(Reference(model, x, 5), y, "after the change");
            }
        }

        /// <summary>The abort callback runs inside the call before its first op: an input copied at the
        /// boundary would not see what it changes there; memory lent to nnrt does.</summary>
        [Test]
        public static void TheInputIsReadInPlaceNotCopied()
        {
            if (!LendsHostMemory()) return;
            using (var model = new Model(Ctx, Fixtures.BlobModel))
            {
                var x = Batch(4, 3);
                var before = Reference(model, x, 4);
                var changed = x.Select(v => -3 * v + 1).ToArray();
                int calls = 0;
                var y = new float[4 * 3];
                using (var options = new RunOptions())
                {
                    options.Abort = () =>
                    {
                        if (calls++ == 0) Array.Copy(changed, x, x.Length);
                        return false;
                    };
                    model.PredictInto(x, new long[] { 4, 2 }, y, options);
                }
                Assert.True(calls > 0, "the abort callback never ran");
                Assert.Sequence(Reference(model, changed, 4), y, "the prediction of the changed input");
                Assert.True(!before.SequenceEqual(y), "the prediction of the input as it was before the call");
            }
        }

        /// <summary>Spans of larger arrays (slices) are read and written where they lie; what lies around
        /// them is left alone.</summary>
        [Test]
        public static void SlicesOfLargerArrays()
        {
            using (var model = new Model(Ctx, Fixtures.BlobModel))
            {
                var x = Batch(7, 4);
                var padded = new float[2 + x.Length];
                Array.Copy(x, 0, padded, 2, x.Length);
                var output = Enumerable.Repeat(42f, 5 + 7 * 3 + 4).ToArray();
                model.PredictInto(padded.AsSpan(2), new long[] { 7, 2 }, output.AsSpan(5, 7 * 3));
                Assert.Sequence(Reference(model, x, 7), output.Skip(5).Take(7 * 3), "the prediction");
                Assert.True(output.Take(5).Concat(output.Skip(5 + 21)).All(v => v == 42f), "the padding was written");
            }
        }

        /// <summary>The spans' sizes are checked before nnrt sees them, and a shape that does not fit the
        /// model is nnrt's Shape error.</summary>
        [Test]
        public static void WrongSizesAreRefused()
        {
            using (var model = new Model(Ctx, Fixtures.BlobModel))
            {
                var x = Batch(3, 5);
                Assert.Fails(Status.InvalidArgument, () => model.PredictInto(x, new long[] { 4, 2 }, new float[12]),
                             "input too short", "6", "8");
                Assert.Fails(Status.Shape, () => model.PredictInto(x, new long[] { 3, 2 }, new float[8]),
                             "output too short", "8", "9");
                Assert.Fails(Status.Shape, () => model.PredictInto(x, new long[] { 2, 3 }, new float[6]),
                             "features do not fit the model");
                Assert.Fails(Status.InvalidArgument, () => model.PredictInto(x, new long[0], new float[9]), "no batch");
                Assert.Throws<ArgumentNullException>(() => model.PredictInto(x, null, new float[9]), "null shape");
            }
        }

        /// <summary>An output span over the input's own memory is computed from a copy, correctly.</summary>
        [Test]
        public static void OverlappingSpansAreCopied()
        {
            using (var model = new Model(Ctx, Fixtures.BlobModel))
            {
                var x = Batch(6, 6);
                var want = Reference(model, x, 6);
                var both = new float[18];
                Array.Copy(x, both, x.Length);
                model.PredictInto(both.AsSpan(0, 12), new long[] { 6, 2 }, both.AsSpan(0, 18));
                Assert.Sequence(want, both, "prediction over its own input");
            }
        }

        /// <summary>PredictInto with NdArrays writes into an array made by Zeros.</summary>
        [Test]
        public static void PredictIntoAnNdArray()
        {
            using (var model = new Model(Ctx, Fixtures.BlobModel))
            using (var x = NdArray.FromHost(Ctx, Batch(4, 7), 4, 2))
            using (var y = NdArray.Zeros(Ctx, DType.F32, model.OutputShape(4)))
            using (var want = model.Predict(x))
            using (var wrong = NdArray.Zeros(Ctx, DType.F32, 4, 4))
            {
                model.PredictInto(x, y);
                Assert.Sequence(want.ToFloatArray(), y.ToFloatArray(), "into an NdArray");
                Assert.Fails(Status.Shape, () => model.PredictInto(x, wrong), "a wrong output shape");
            }
        }

        /// <summary>A cancelled RunOptions stops every call that takes it until Reset.</summary>
        [Test]
        public static void CancelledOptionsStopCallsUntilReset()
        {
            string dir = Fixtures.TempDir();
            try
            {
                string path = Path.Combine(dir, "m.safetensors");
                using (var model = new Model(Ctx, Fixtures.BlobModel))
                using (var data = Fixtures.BlobDataset(Ctx, 60, 8))
                using (var x = NdArray.FromHost(Ctx, Batch(4, 9), 4, 2))
                using (var options = new RunOptions())
                {
                    model.Save(path);
                    var values = Batch(4, 9);
                    var y = new float[12];
                    options.Cancel();
                    Assert.Fails(Status.Cancelled, () => model.Predict(x, options), "Predict");
                    Assert.Fails(Status.Cancelled, () => model.PredictInto(values, new long[] { 4, 2 }, y, options), "PredictInto");
                    Assert.Fails(Status.Cancelled, () => model.Evaluate(data, options), "Evaluate");
                    Assert.Fails(Status.Cancelled, () => Model.Load(Ctx, path, options), "Load");
                    options.Reset();
                    using (var want = model.Predict(x))
                    using (var got = model.Predict(x, options))
                    {
                        Assert.Sequence(want.ToFloatArray(), got.ToFloatArray(), "Predict after Reset");
                        model.PredictInto(values, new long[] { 4, 2 }, y, options);
                        Assert.Sequence(want.ToFloatArray(), y, "PredictInto after Reset");
                    }
                    using (var evaluation = model.Evaluate(data, options))
                        Assert.True(evaluation.Accuracy >= 0 && evaluation.Accuracy <= 1, "accuracy");
                    using (var loaded = Model.Load(Ctx, path, options))
                        Assert.Equal(model.ParamCount, loaded.ParamCount, "loaded parameters");
                    using (var none = model.Predict(x, null)) Assert.Equal(2, none.Rank, "null options");
                }
            }
            finally
            {
                Directory.Delete(dir, true);
            }
        }

        /// <summary>ImportOnnx stops with cancelled options and works after Reset.</summary>
        [Test]
        public static void OnnxImportTakesRunOptions()
        {
            string dir = Fixtures.TempDir();
            try
            {
                string path = Path.Combine(dir, "m.onnx");
                using (var model = new Model(Ctx, Fixtures.BlobModel))
                using (var options = new RunOptions())
                {
                    model.ExportOnnx(path);
                    options.Cancel();
                    Assert.Fails(Status.Cancelled, () => Model.ImportOnnx(Ctx, path, null, options), "ImportOnnx");
                    options.Reset();
                    using (var imported = Model.ImportOnnx(Ctx, path, null, options))
                        Assert.Sequence(model.OutputShape(2), imported.OutputShape(2), "imported output shape");
                }
            }
            finally
            {
                Directory.Delete(dir, true);
            }
        }

        /// <summary>A timeout of 1e-9 s has passed before the first op: DeadlineExceeded; a long one does
        /// not stop anything.</summary>
        [Test]
        public static void TinyTimeoutIsDeadlineExceeded()
        {
            using (var model = new Model(Ctx, Deep))
            using (var x = NdArray.FromHost(Ctx, Batch(4, 10), 4, 2))
            using (var options = new RunOptions(1e-9))
            {
                Assert.Equal(1e-9, options.TimeoutSeconds, "TimeoutSeconds");
                var e = Assert.Fails(Status.DeadlineExceeded, () => model.Predict(x, options), "Predict");
                Assert.Contains("NNRT_ERR_DEADLINE_EXCEEDED", e.ToString(), "ToString");
                Assert.Fails(Status.DeadlineExceeded, () => model.PredictInto(Batch(4, 10), new long[] { 4, 2 }, new float[12], options),
                             "PredictInto");
                options.Timeout = TimeSpan.FromMinutes(10);
                Assert.Equal(600.0, options.TimeoutSeconds, "TimeoutSeconds from Timeout");
                using (var y = model.Predict(x, options)) Assert.Equal(4L, y.Shape[0], "with a long timeout");
                options.Timeout = null;
                Assert.Equal(0.0, options.TimeoutSeconds, "no timeout");
                using (var y = model.Predict(x, options)) Assert.Equal(4L, y.Shape[0], "without a timeout");
                Assert.Fails(Status.InvalidArgument, () => options.TimeoutSeconds = -1, "a negative timeout");
            }
        }

        /// <summary>Cancel from another thread stops a loop of predictions running with the options.</summary>
        [Test]
        public static void CancelFromAnotherThreadStopsALoop()
        {
            using (var model = new Model(Ctx, Deep))
            using (var options = new RunOptions())
            {
                var x = Batch(16, 11);
                var y = new float[16 * 3];
                var running = new ManualResetEventSlim(false);
                Exception outcome = null;
                var loop = new Thread(() =>
                {
                    try
                    {
                        for (int i = 0; i < 1000000; i++)
                        {
                            model.PredictInto(x, new long[] { 16, 2 }, y, options);
                            running.Set();
                        }
                    }
                    catch (Exception e)
                    {
                        outcome = e;
                    }
                });
                loop.Start();
                Assert.True(running.Wait(TimeSpan.FromSeconds(60)), "the loop did not start");
                options.Cancel();
                Assert.True(loop.Join(TimeSpan.FromSeconds(60)), "the loop did not stop");
                var error = outcome as NnrtException;
                Assert.True(error != null, "expected NnrtException, got " + outcome);
                Assert.Equal(Status.Cancelled, error.Status, "status");
                options.Reset();
                model.PredictInto(x, new long[] { 16, 2 }, y, options);
            }
        }

        /// <summary>An abort callback that says stop at its 3rd call stops the prediction there.</summary>
        [Test]
        public static void AbortCallbackStopsAtItsThirdCall()
        {
            using (var model = new Model(Ctx, Deep))
            using (var x = NdArray.FromHost(Ctx, Batch(4, 12), 4, 2))
            using (var want = model.Predict(x))
            {
                int calls = 0;
                using (var options = new RunOptions(0, () => ++calls >= 3))
                {
                    for (int round = 0; round < 2; round++) // recording the plan, then replaying it
                    {
                        calls = 0;
                        Assert.Fails(Status.Cancelled, () => model.Predict(x, options), "round " + round);
                        Assert.Equal(3, calls, "checks before stopping");
                    }
                    options.Abort = () => { calls++; return false; };
                    calls = 0;
                    using (var y = model.Predict(x, options))
                        Assert.Sequence(want.ToFloatArray(), y.ToFloatArray(), "a pass that was not stopped");
                    Assert.True(calls > 3, "a whole pass checks more often than " + calls + " times");
                    options.Abort = null;
                    Assert.True(options.Abort == null, "no callback");
                    using (var y = model.Predict(x, options))
                        Assert.Sequence(want.ToFloatArray(), y.ToFloatArray(), "without the callback");
                }
            }
        }

        /// <summary>An exception in the abort callback stops the call; it is the InnerException.</summary>
        [Test]
        public static void AbortCallbackExceptionStopsTheCall()
        {
            using (var model = new Model(Ctx, Deep))
            using (var x = NdArray.FromHost(Ctx, Batch(4, 13), 4, 2))
            using (var options = new RunOptions(0, () => { throw new InvalidOperationException("broken callback"); }))
            {
                var e = Assert.Fails(Status.Cancelled, () => model.Predict(x, options), "Predict", "broken callback");
                Assert.True(e.InnerException is InvalidOperationException, "inner exception: " + e.InnerException);
                options.Abort = () => false;
                using (var y = model.Predict(x, options)) Assert.Equal(4L, y.Shape[0], "after the callback was replaced");
            }
        }

        /// <summary>Disposed run options cannot be used; disposing twice is harmless.</summary>
        [Test]
        public static void DisposedRunOptions()
        {
            using (var model = new Model(Ctx, Fixtures.BlobModel))
            using (var x = NdArray.FromHost(Ctx, Batch(2, 14), 2, 2))
            {
                var options = new RunOptions();
                options.Dispose();
                options.Dispose();
                Assert.Throws<ObjectDisposedException>(() => options.Cancel(), "Cancel");
                Assert.Throws<ObjectDisposedException>(() => model.Predict(x, options), "Predict");
            }
        }
    }
}
