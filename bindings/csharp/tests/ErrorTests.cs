using System;
using System.Collections.Concurrent;
using System.IO;
using System.Linq;
using System.Threading;

namespace Nnrt.Tests
{
    /// <summary>Error paths: each failure raises NnrtException with the C status and the library's
    /// message, on every thread independently.</summary>
    public static class ErrorTests
    {
        private static Context Ctx { get { return Fixtures.Context; } }

        /// <summary>32 threads fail at once in different ways; each sees its own status and message,
        /// never another thread's (nnrt_last_error is per thread, and the binding reads it on the
        /// thread that made the call).</summary>
        [Test]
        public static void ManyThreadsSeeTheirOwnErrors()
        {
            const int threads = 32, rounds = 20;
            var problems = new ConcurrentQueue<string>();
            var start = new Barrier(threads);
            var workers = Enumerable.Range(0, threads).Select(id => new Thread(() =>
            {
                try
                {
                    start.SignalAndWait();
                    // Sizes from 2 up: a dimension of 1 would broadcast.
                    using (var a = NdArray.FromHost(Ctx, new float[id + 2], id + 2))
                    using (var b = NdArray.FromHost(Ctx, new float[id + 3], id + 3))
                    {
                        for (int round = 0; round < rounds; round++)
                        {
                            string op = "no_such_op_" + id + "_" + round;
                            Assert.Fails(Status.Unsupported, () => Ctx.Op(op, null, a), "unknown op", "\"" + op + "\"");
                            Assert.Fails(Status.Shape, () => a.Add(b), "broadcast", "[" + (id + 2) + "]", "[" + (id + 3) + "]");
                            string key = "bad_key_" + id;
                            Assert.Fails(Status.InvalidArgument, () => new Context("{\"" + key + "\": " + round + "}"),
                                         "context option", key);
                            string path = "/nonexistent/model-" + id + "-" + round + ".safetensors";
                            Assert.Fails(Status.Io, () => Model.Load(Ctx, path), "load", path);
                            using (var sum = a.Add(a)) // a success in between changes nothing
                                Assert.Equal((long)id + 2, sum.ElementCount, "sum");
                        }
                    }
                }
                catch (Exception e)
                {
                    problems.Enqueue("thread " + id + ": " + e.Message);
                }
            })).ToList();
            workers.ForEach(t => t.Start());
            workers.ForEach(t => t.Join());
            Assert.True(problems.IsEmpty, string.Join("\n", problems.Take(5)));
        }

        /// <summary>Bad arrays and ops.</summary>
        [Test]
        public static void ArrayAndOpErrors()
        {
            Assert.Fails(Status.InvalidArgument, () => NdArray.FromHost(Ctx, new float[3], 2, 2), "size mismatch", "12", "16");
            Assert.Fails(Status.InvalidArgument, () => NdArray.Zeros(Ctx, DType.F32, 1, 1, 1, 1, 1, 1, 1, 1, 1), "rank 9");
            Assert.Fails(Status.InvalidArgument, () => NdArray.Zeros(Ctx, DType.F32, -1), "negative dimension");
            Assert.Fails(Status.DType, () => NdArray.Zeros(Ctx, (DType)77, 1), "unknown dtype");
            using (var f = NdArray.FromHost(Ctx, new[] { 1f, 2f }, 2))
            using (var i = NdArray.FromHost(Ctx, new[] { 1, 2 }, 2))
            {
                Assert.Fails(Status.DType, () => f.Add(i), "mixed dtypes", "f32", "i32");
                Assert.Fails(Status.DType, () => f.ToInt32Array(), "reading f32 as int[]", "F32");
                Assert.Fails(Status.DType, () => f.ToUInt16Array(), "reading f32 as 16-bit patterns");
                Assert.Fails(Status.InvalidArgument, () => Ctx.Op("add", new[] { f }, null, 1), "one input for add");
                Assert.Fails(Status.InvalidArgument, () => Ctx.Op("relu", "{\"no_such_attr\": 1}", f), "unknown attribute", "no_such_attr");
                Assert.Fails(Status.InvalidArgument, () => Ctx.Op("relu", "{not json", f), "malformed attributes");
                Assert.Fails(Status.Shape, () => f.MatMul(f), "matmul of vectors");
            }
            Assert.Throws<ArgumentException>(() => NdArray.FromHost(Ctx, DType.F32, new ushort[1], 1), "ushort[] into F32");
            Assert.Throws<ArgumentException>(() => new Context("{\"a\0\": 1}"), "NUL in a string");
        }

        /// <summary>Bad contexts and models.</summary>
        [Test]
        public static void ContextAndModelErrors()
        {
            Assert.Fails(Status.InvalidArgument, () => new Context("{\"threads\": \"many\"}"), "wrong type", "threads");
            Assert.Fails(Status.InvalidArgument, () => new Context("{\"backend\": \"no_such_backend\"}"), "backend", "no_such_backend");
            Assert.Fails(Status.InvalidArgument, () => new Context("[1, 2"), "malformed JSON");
            Assert.Fails(Status.InvalidArgument, () => new Model(Ctx, "{\"input\": [2], \"layers\": [{\"type\": \"no_such_layer\"}]}"),
                         "layer type", "no_such_layer");
            Assert.Fails(Status.Shape, () => new Model(Ctx, "{\"input\": [1, 3, 3], \"layers\": [{\"type\": \"conv2d\", \"filters\": 1, \"kernel\": [5, 5]}, {\"type\": \"output\", \"units\": 2, \"loss\": \"nll\"}]}"),
                         "kernel larger than the input");
            using (var model = new Model(Ctx, Fixtures.BlobModel))
            {
                Assert.Fails(Status.InvalidArgument, () => model.GetParam("nope.weight"), "unknown parameter", "nope.weight", "layer0.weight");
                using (var wrong = NdArray.Zeros(Ctx, DType.F32, 3, 3))
                    Assert.Fails(Status.Shape, () => model.SetParam("layer0.weight", wrong), "parameter shape", "[16, 2]", "[3, 3]");
                using (var ints = NdArray.Zeros(Ctx, DType.I32, 16, 2))
                    Assert.Fails(Status.DType, () => model.SetParam("layer0.weight", ints), "integer parameter");
                using (var input = NdArray.Zeros(Ctx, DType.F32, 4, 3))
                    Assert.Fails(Status.Shape, () => model.Predict(input), "input shape", "[4, 3]");
                Assert.Fails(Status.Io, () => model.Save("/nonexistent/folder/model.safetensors"), "save", "/nonexistent/folder");
                using (var data = Fixtures.BlobDataset(Ctx, 4, 1))
                using (var other = new Model(Ctx, "{\"input\": [5], \"layers\": [{\"type\": \"output\", \"units\": 3, \"loss\": \"nll\"}]}"))
                    Assert.Fails(Status.Shape, () => other.Evaluate(data), "dataset does not fit the model");
            }
        }

        /// <summary>Bad files and datasets.</summary>
        [Test]
        public static void FileAndDatasetErrors()
        {
            string dir = Fixtures.TempDir();
            try
            {
                string garbage = Path.Combine(dir, "garbage.safetensors");
                File.WriteAllText(garbage, "this is not a model");
                Assert.Fails(Status.Corrupt, () => Model.Load(Ctx, garbage), "garbage model");
                Assert.Fails(Status.Io, () => Model.Load(Ctx, Path.Combine(dir, "missing")), "missing model", "missing");
                string csv = Path.Combine(dir, "bad.csv");
                File.WriteAllText(csv, "0,1,2\n1,x,3\n");
                Assert.Fails(Status.Corrupt, () => Dataset.LoadCsv(Ctx, csv), "bad CSV", "bad.csv");
                Assert.Fails(Status.Io, () => Dataset.LoadIdx(Ctx, Path.Combine(dir, "none-images"), Path.Combine(dir, "none-labels")),
                             "missing IDX", "none-");
                Assert.Fails(Status.InvalidArgument, () => Dataset.Load(Ctx, "{\"format\": \"parquet\"}"), "unknown format");
                using (var data = Fixtures.BlobDataset(Ctx, 10, 1))
                {
                    Assert.Fails(Status.InvalidArgument, () => data.Features(Ctx, 5, 6), "range past the end", "10");
                    NdArray labels;
                    Assert.Fails(Status.InvalidArgument, () => data.Examples(Ctx, -1, 2, out labels), "negative start");
                }
                using (var x = NdArray.Zeros(Ctx, DType.F32, 3, 2))
                using (var y = NdArray.Zeros(Ctx, DType.I64, 4))
                using (var flags = NdArray.Zeros(Ctx, DType.Bool, 3))
                using (var negative = NdArray.FromHost(Ctx, new long[] { 0, -1, 2 }, 3))
                {
                    Assert.Fails(Status.Shape, () => Dataset.FromArrays(Ctx, x, y), "example counts", "3", "4");
                    Assert.Fails(Status.DType, () => Dataset.FromArrays(Ctx, x, flags), "bool labels");
                    Assert.Fails(Status.InvalidArgument, () => Dataset.FromArrays(Ctx, x, negative), "negative class");
                }
            }
            finally
            {
                Directory.Delete(dir, true);
            }
        }

        /// <summary>Bad trainer options and training inputs.</summary>
        [Test]
        public static void TrainerErrors()
        {
            using (var model = new Model(Ctx, Fixtures.BlobModel))
            {
                Assert.Fails(Status.InvalidArgument, () => new Trainer(model, "{\"optimizer\": {\"type\": \"no_such_optimizer\"}}"),
                             "optimizer", "no_such_optimizer");
                Assert.Fails(Status.InvalidArgument, () => new Trainer(model, "{\"batch_sise\": 8}"), "misspelt key", "batch_sise");
                Assert.Fails(Status.InvalidArgument, () => new Trainer(model, "{\"workers\": 0}"), "no workers", "workers");
                using (var parallel = new Trainer(model, "{\"workers\": 2, \"mode\": \"average\"}"))
                {
                    Assert.True(parallel.Rank == 0 && parallel.WorldSize == 1, "rank and world size without distributed training");
                }
                using (var noOutput = new Model(Ctx, "{\"input\": [2], \"layers\": [{\"type\": \"dense\", \"units\": 2}]}"))
                    Assert.Fails(Status.InvalidArgument, () => new Trainer(noOutput), "model without an output layer");
                using (var trainer = new Trainer(model))
                using (var x = NdArray.Zeros(Ctx, DType.F32, 2, 2))
                using (var wide = NdArray.Zeros(Ctx, DType.F32, 2, 5))
                using (var bigLabels = NdArray.FromHost(Ctx, new long[] { 0, 3 }, 2))
                using (var labels = NdArray.FromHost(Ctx, new long[] { 0, 1 }, 2))
                using (var nan = NdArray.FromHost(Ctx, new[] { float.NaN, 0, 0, 0 }, 2, 2))
                using (var data = Fixtures.BlobDataset(Ctx, 8, 1))
                {
                    Assert.Fails(Status.InvalidArgument, () => trainer.Step(x, bigLabels), "label out of range");
                    Assert.Fails(Status.Shape, () => trainer.Step(wide, labels), "input shape", "[2, 5]");
                    Assert.Fails(Status.InvalidArgument, () => trainer.Step(nan, labels), "non-finite loss");
                    Assert.Fails(Status.InvalidArgument, () => trainer.Fit(data, -1), "negative epochs");
                    Assert.Fails(Status.Io, () => trainer.Restore("/nonexistent/checkpoint"), "missing checkpoint");
                }
            }
        }

        /// <summary>Using a disposed object raises ObjectDisposedException instead of touching freed memory.</summary>
        [Test]
        public static void UseAfterDispose()
        {
            var a = NdArray.FromHost(Ctx, new[] { 1f }, 1);
            a.Dispose();
            a.Dispose(); // twice is harmless
            Assert.Throws<ObjectDisposedException>(() => a.ToFloatArray(), "read a disposed array");
            Assert.Throws<ObjectDisposedException>(() => Ctx.Op("neg", null, a), "op on a disposed array");
            var model = new Model(Ctx, Fixtures.BlobModel);
            model.Dispose();
            Assert.Throws<ObjectDisposedException>(() => { long n = model.ParamCount; }, "disposed model");
        }
    }
}
