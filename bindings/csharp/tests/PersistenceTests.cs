using System;
using System.IO;
using System.Linq;

namespace Nnrt.Tests
{
    /// <summary>Saving and loading models and checkpoints; reading and writing parameters.</summary>
    public static class PersistenceTests
    {
        private static Context Ctx { get { return Fixtures.Context; } }

        /// <summary>A saved model loads (on another context too) and predicts exactly the same.</summary>
        [Test]
        public static void SavedModelPredictsTheSame()
        {
            string dir = Fixtures.TempDir();
            try
            {
                string path = Path.Combine(dir, "blobs.safetensors");
                float[] x;
                long[] y;
                Fixtures.Blobs(50, 11, out x, out y);
                float[] expected;
                long count;
                using (var data = Fixtures.BlobDataset(Ctx, 300, 12))
                using (var model = new Model(Ctx, Fixtures.BlobModel))
                using (var trainer = new Trainer(model, Fixtures.BlobTrainer))
                using (var input = NdArray.FromHost(Ctx, x, 50, 2))
                {
                    trainer.Fit(data, 2);
                    model.Save(path);
                    using (var p = model.Predict(input)) expected = p.ToFloatArray();
                    count = model.ParamCount;
                }
                using (var other = new Context("{\"threads\": 1}"))
                using (var loaded = Model.Load(other, path))
                using (var input = NdArray.FromHost(other, x, 50, 2))
                using (var p = loaded.Predict(input))
                {
                    Assert.Sequence(new long[] { 50, 3 }, p.Shape, "prediction shape");
                    Assert.Sequence(expected, p.ToFloatArray(), "predictions after loading");
                    Assert.Equal(count, loaded.ParamCount, "parameter count");
                    Assert.Equal(2L * 16 + 16 + 16 * 3 + 3, count, "parameters of 2-16-3");
                    string summary = loaded.Summary();
                    Assert.Equal((double)count, Fixtures.JsonNumber(summary, "total_params"), "summary total_params");
                    Assert.Contains("\"layers\"", summary, "summary");
                }
            }
            finally
            {
                Directory.Delete(dir, true);
            }
        }

        /// <summary>An exported ONNX model imports back, from its file and from its bytes, to the same
        /// predictions and, with a loss, trains; a garbage file and half the bytes are Corrupt.</summary>
        [Test]
        public static void OnnxExportImportsBack()
        {
            string dir = Fixtures.TempDir();
            try
            {
                string path = Path.Combine(dir, "blobs.onnx");
                float[] x;
                long[] y;
                Fixtures.Blobs(20, 5, out x, out y);
                using (var model = new Model(Ctx, Fixtures.BlobModel))
                using (var input = NdArray.FromHost(Ctx, x, 20, 2))
                using (var expected = model.Predict(input))
                {
                    model.ExportOnnx(path);
                    const string options = "{\"loss\": \"nll\"}";
                    using (var fromFile = Model.ImportOnnx(Ctx, path, options))
                    using (var fromBytes = Model.ImportOnnxBytes(Ctx, File.ReadAllBytes(path), options))
                    {
                        foreach (var imported in new[] { fromFile, fromBytes })
                        {
                            using (var got = imported.Predict(input))
                            using (var data = Fixtures.BlobDataset(Ctx, 100, 6))
                            using (var trainer = new Trainer(imported, Fixtures.BlobTrainer))
                            {
                                float[] e = expected.ToFloatArray(), g = got.ToFloatArray();
                                for (int i = 0; i < e.Length; ++i)
                                    Assert.True(Math.Abs(e[i] - g[i]) < 1e-6, "prediction " + i);
                                trainer.Fit(data, 1);
                            }
                        }
                    }
                }
                string garbage = Path.Combine(dir, "garbage.onnx");
                File.WriteAllBytes(garbage, new byte[] { 0xff, 0xff, 0xff });
                Assert.Fails(Status.Corrupt, () => Model.ImportOnnx(Ctx, garbage), "garbage ONNX");
                byte[] whole = File.ReadAllBytes(path), half = new byte[whole.Length / 2];
                Array.Copy(whole, half, half.Length);
                Assert.Fails(Status.Corrupt, () => Model.ImportOnnxBytes(Ctx, half), "half an ONNX file");
            }
            finally
            {
                Directory.Delete(dir, true);
            }
        }

        /// <summary>A trainer checkpoint restores the optimizer too: the next step's loss is bit-identical
        /// to the one the saved run had, and the checkpoint also loads as a model.</summary>
        [Test]
        public static void CheckpointContinuesExactly()
        {
            string dir = Fixtures.TempDir();
            try
            {
                string path = Path.Combine(dir, "checkpoint.safetensors");
                float[] x;
                long[] y;
                Fixtures.Blobs(32, 13, out x, out y);
                double expected;
                using (var features = NdArray.FromHost(Ctx, x, 32, 2))
                using (var labels = NdArray.FromHost(Ctx, y, 32))
                {
                    using (var model = new Model(Ctx, Fixtures.BlobModel))
                    using (var trainer = new Trainer(model, Fixtures.BlobTrainer))
                    {
                        for (int i = 0; i < 5; i++) trainer.Step(features, labels);
                        trainer.Save(path);
                        trainer.Step(features, labels);
                        expected = trainer.Step(features, labels);
                    }
                    using (var model = new Model(Ctx, Fixtures.BlobModel))
                    using (var trainer = new Trainer(model, Fixtures.BlobTrainer))
                    {
                        trainer.Restore(path);
                        trainer.Step(features, labels);
                        Assert.Equal(expected, trainer.Step(features, labels), "loss after restoring");
                    }
                    using (var model = new Model(Ctx, Fixtures.BlobModel))
                    using (var sgd = new Trainer(model, "{\"optimizer\": {\"type\": \"sgd\"}}"))
                        Assert.Fails(Status.InvalidArgument, () => sgd.Restore(path), "another optimizer's checkpoint");
                    using (var model = Model.Load(Ctx, path))
                        Assert.Equal(99L, model.ParamCount, "the checkpoint as a model");
                }
            }
            finally
            {
                Directory.Delete(dir, true);
            }
        }

        /// <summary>Paths travel as UTF-8: a model saves and loads under a non-ASCII name, and a failure
        /// names the path, non-ASCII characters intact.</summary>
        [Test]
        public static void NonAsciiPaths()
        {
            string dir = Fixtures.TempDir();
            try
            {
                string folder = Path.Combine(dir, "modèles-模型");
                Directory.CreateDirectory(folder);
                string path = Path.Combine(folder, "réseau.safetensors");
                using (var model = new Model(Ctx, Fixtures.BlobModel)) model.Save(path);
                Assert.True(File.Exists(path), "the file has the UTF-8 name");
                using (var model = Model.Load(Ctx, path)) Assert.Equal(99L, model.ParamCount, "loaded");
                string missing = Path.Combine(folder, "ñandú.safetensors");
                Assert.Fails(Status.Io, () => Model.Load(Ctx, missing), "missing", "ñandú");
            }
            finally
            {
                Directory.Delete(dir, true);
            }
        }

        /// <summary>A truncated file is detected as corrupt, not read.</summary>
        [Test]
        public static void TruncatedModelIsCorrupt()
        {
            string dir = Fixtures.TempDir();
            try
            {
                string path = Path.Combine(dir, "model.safetensors");
                using (var model = new Model(Ctx, Fixtures.BlobModel)) model.Save(path);
                byte[] bytes = File.ReadAllBytes(path);
                File.WriteAllBytes(path, bytes.Take(bytes.Length - 10).ToArray());
                Assert.Fails(Status.Corrupt, () => Model.Load(Ctx, path), "truncated model");
            }
            finally
            {
                Directory.Delete(dir, true);
            }
        }

        /// <summary>Parameters read back what was written, in PyTorch's layout; other float dtypes convert.</summary>
        [Test]
        public static void ParametersRoundTrip()
        {
            using (var model = new Model(Ctx, Fixtures.BlobModel))
            {
                using (var w = model.GetParam("layer0.weight"))
                {
                    Assert.Equal(DType.F32, w.DType, "parameter dtype");
                    Assert.Sequence(new long[] { 16, 2 }, w.Shape, "dense weight is [units, inputs]");
                }
                var values = Enumerable.Range(0, 32).Select(i => i * 0.25f).ToArray();
                using (var v = NdArray.FromHost(Ctx, values, 16, 2)) model.SetParam("layer0.weight", v);
                using (var w = model.GetParam("layer0.weight"))
                    Assert.Sequence(values, w.ToFloatArray(), "weight after set");
                using (var v = NdArray.FromHost(Ctx, Enumerable.Repeat(0.5, 3).ToArray(), 3))
                    model.SetParam("layer1.bias", v);
                using (var b = model.GetParam("layer1.bias"))
                    Assert.Sequence(new[] { 0.5f, 0.5f, 0.5f }, b.ToFloatArray(), "f64 value converted");
            }
        }
    }
}
