using System;
using System.IO;
using System.Linq;

namespace Nnrt.Tests
{
    /// <summary>int8 quantization (Model.Quantize) and I8 arrays (C# sbyte).</summary>
    public static class QuantizationTests
    {
        private static Context Ctx { get { return Fixtures.Context; } }

        /// <summary>1x8x8 images: a convolution, then two dense layers.</summary>
        private const string Cnn = @"{""input"": [1, 8, 8], ""seed"": 11, ""layers"": [
            {""type"": ""conv2d"", ""name"": ""c1"", ""filters"": 4, ""kernel"": 3, ""padding"": ""same"", ""activation"": ""relu""},
            {""type"": ""flatten""},
            {""type"": ""dense"", ""name"": ""d1"", ""units"": 16, ""activation"": ""relu""},
            {""type"": ""output"", ""name"": ""out"", ""units"": 3, ""activation"": ""softmax"", ""loss"": ""nll""}]}";

        private const int Images = 64;

        /// <summary>Random images in [0, 1), F32 [64, 1, 8, 8].</summary>
        private static NdArray MakeImages()
        {
            var random = new Random(17);
            var pixels = new float[Images * 64];
            for (int i = 0; i < pixels.Length; i++) pixels[i] = (float)random.NextDouble();
            return NdArray.FromHost(Ctx, pixels, Images, 1, 8, 8);
        }

        /// <summary>A calibration dataset of the images (labels all 0: quantization does not read them).</summary>
        private static Dataset Calibration(NdArray images)
        {
            using (var labels = NdArray.FromHost(Ctx, new long[images.Shape[0]], images.Shape[0]))
                return Dataset.FromArrays(Ctx, images, labels);
        }

        private static float[] Predict(Model model, NdArray x)
        {
            using (var p = model.Predict(x)) return p.ToFloatArray();
        }

        private static float[] Param(Model model, string name)
        {
            using (var p = model.GetParam(name)) return p.ToFloatArray();
        }

        private static float LargestDifference(float[] a, float[] b)
        {
            return a.Zip(b, (u, v) => Math.Abs(u - v)).Max();
        }

        /// <summary>A quantized model predicts close to the float one, with integer weights of 7 bits.</summary>
        [Test]
        public static void QuantizedModelPredictsLikeTheFloatOne()
        {
            using (var x = MakeImages())
            using (var calibration = Calibration(x))
            using (var model = new Model(Ctx, Cnn))
            using (var quantized = model.Quantize(calibration, "{\"batches\": 0, \"batch_size\": 16}"))
            {
                float worst = LargestDifference(Predict(model, x), Predict(quantized, x));
                Assert.True(worst < 0.05f, "largest probability difference " + worst);
                foreach (var name in new[] { "c1.weight", "d1.weight" })
                {
                    float[] w = Param(quantized, name);
                    Assert.Equal(Param(model, name).Length, w.Length, name + " size");
                    Assert.True(w.All(v => v == Math.Round(v) && Math.Abs(v) <= 63), name + " holds integers within [-63, 63]");
                }
                Assert.True(Param(quantized, "d1.weight_scale").All(s => s > 0), "positive weight scales");
                Assert.True(Param(model, "d1.weight").Any(v => v != Math.Round(v)), "the float model keeps its weights");
            }
        }

        /// <summary>A quantized model cannot be trained, exported to ONNX or quantized again.</summary>
        [Test]
        public static void QuantizedModelRefusals()
        {
            string dir = Fixtures.TempDir();
            try
            {
                using (var x = MakeImages())
                using (var calibration = Calibration(x))
                using (var model = new Model(Ctx, Cnn))
                using (var quantized = model.Quantize(calibration))
                {
                    Assert.Fails(Status.Unsupported, () => new Trainer(quantized, "{\"optimizer\": {\"type\": \"sgd\"}}").Dispose(),
                                 "a trainer of a quantized model", "quantized");
                    Assert.Fails(Status.Unsupported, () => quantized.ExportOnnx(Path.Combine(dir, "q.onnx")), "an ONNX export");
                    Assert.Fails(Status.Unsupported, () => quantized.Quantize(calibration).Dispose(), "quantizing twice",
                                 "already quantized");
                }
            }
            finally
            {
                Directory.Delete(dir, true);
            }
        }

        /// <summary>The options reach nnrt: 8-bit weights, excluded layers, and bad options named in the error.</summary>
        [Test]
        public static void QuantizeOptions()
        {
            using (var x = MakeImages())
            using (var calibration = Calibration(x))
            using (var model = new Model(Ctx, Cnn))
            {
                using (var eight = model.Quantize(calibration, "{\"weight_bits\": 8, \"batches\": 0}"))
                {
                    float[] w = Param(eight, "d1.weight");
                    float top = w.Max(v => Math.Abs(v));
                    Assert.True(w.All(v => v == Math.Round(v)) && top > 63 && top <= 127, "8-bit weights, largest " + top);
                    float worst = LargestDifference(Predict(model, x), Predict(eight, x));
                    Assert.True(worst < 0.05f, "8 bits: largest probability difference " + worst);
                }
                using (var kept = model.Quantize(calibration, "{\"exclude\": [\"c1\"]}"))
                    Assert.Sequence(Param(model, "c1.weight"), Param(kept, "c1.weight"), "the excluded layer c1");
                Assert.Fails(Status.InvalidArgument, () => model.Quantize(calibration, "{\"bits\": 8}"), "an unknown option", "bits");
                Assert.Fails(Status.InvalidArgument, () => model.Quantize(calibration, "{\"exclude\": [\"nope\"]}"),
                             "an unknown layer", "nope");
                using (var small = NdArray.Zeros(Ctx, DType.F32, 4, 1, 6, 6))
                using (var wrong = Calibration(small))
                    Assert.Fails(Status.Shape, () => model.Quantize(wrong), "6x6 images");
                Assert.Throws<ArgumentNullException>(() => model.Quantize(null), "a null dataset");
            }
        }

        /// <summary>A quantized weight is set from sbyte values; the model saves, loads and shares.</summary>
        [Test]
        public static void QuantizedWeightsSaveAndShare()
        {
            string dir = Fixtures.TempDir();
            try
            {
                using (var x = MakeImages())
                using (var calibration = Calibration(x))
                using (var model = new Model(Ctx, Cnn))
                using (var quantized = model.Quantize(calibration))
                {
                    long[] shape;
                    using (var p = quantized.GetParam("d1.weight")) shape = p.Shape;
                    var random = new Random(5);
                    var w = new sbyte[shape[0] * shape[1]];
                    for (int i = 0; i < w.Length; i++) w[i] = (sbyte)random.Next(-63, 64);
                    using (var v = NdArray.FromHost(Ctx, w, shape)) quantized.SetParam("d1.weight", v);
                    Assert.Sequence(w.Select(b => (float)b), Param(quantized, "d1.weight"), "d1.weight after set");
                    using (var v = NdArray.FromHost(Ctx, w.Select(b => (float)b).ToArray(), shape))
                        Assert.Fails(Status.DType, () => quantized.SetParam("d1.weight", v), "a float value", "i8");
                    w[0] = 64;
                    using (var v = NdArray.FromHost(Ctx, w, shape))
                        Assert.Fails(Status.InvalidArgument, () => quantized.SetParam("d1.weight", v), "64 in 7 bits", "63");

                    float[] want = Predict(quantized, x);
                    string path = Path.Combine(dir, "quantized.safetensors");
                    quantized.Save(path);
                    using (var loaded = Model.Load(Ctx, path))
                        Assert.Sequence(want, Predict(loaded, x), "the loaded quantized model");
                    using (var shared = quantized.Share())
                        Assert.Sequence(want, Predict(shared, x), "a shared quantized model");
                }
            }
            finally
            {
                Directory.Delete(dir, true);
            }
        }

        /// <summary>sbyte arrays go to nnrt as I8 and back unchanged.</summary>
        [Test]
        public static void SByteArraysRoundTrip()
        {
            var data = new sbyte[] { sbyte.MinValue, -63, -1, 0, 63, sbyte.MaxValue };
            using (var a = NdArray.FromHost(Ctx, data, 2, 3))
            {
                Assert.Equal(DType.I8, a.DType, "dtype");
                Assert.Sequence(new long[] { 2, 3 }, a.Shape, "shape");
                Assert.Equal(6L, a.ByteCount, "bytes");
                Assert.Sequence(data, a.ToSByteArray(), "i8");
                Assert.Fails(Status.DType, () => a.ToByteArray(), "read as byte[]");
            }
            Assert.Equal("i8", DTypes.JsonName(DType.I8), "JSON name");
            using (var z = NdArray.Zeros(Ctx, DType.I8, 2, 2))
                Assert.Sequence(new sbyte[4], z.ToSByteArray(), "zeros");
        }
    }
}
