using System;
using System.Globalization;
using System.IO;
using System.Text.RegularExpressions;
using System.Threading;

namespace Nnrt.Tests
{
    /// <summary>What several tests share: one context, a synthetic classification task, small configs,
    /// temporary files and a way to read one field of the library's JSON.</summary>
    public static class Fixtures
    {
        private static readonly Lazy<Context> shared = new Lazy<Context>(
            () => new Context("{\"deterministic\": true, \"seed\": 7}"), LazyThreadSafetyMode.ExecutionAndPublication);

        /// <summary>A deterministic context the tests share (contexts may be shared across threads).</summary>
        public static Context Context { get { return shared.Value; } }

        /// <summary>Three Gaussian blobs in 2-D, one class each: easy to learn, quick to train.</summary>
        public const int Classes = 3;

        /// <summary>A 2-feature, 3-class model: one hidden layer and a softmax output.</summary>
        public const string BlobModel = @"{""input"": [2], ""seed"": 5, ""layers"": [
            {""type"": ""dense"", ""units"": 16, ""activation"": ""relu""},
            {""type"": ""output"", ""units"": 3, ""activation"": ""softmax"", ""loss"": ""nll""}]}";

        /// <summary>Adam with a learning rate that learns the blobs in a few epochs.</summary>
        public const string BlobTrainer = @"{""optimizer"": {""type"": ""adam"", ""learning_rate"": 0.02},
            ""batch_size"": 32, ""seed"": 3}";

        /// <summary>Makes `count` blob examples: features [count, 2] F32 and class labels [count] I64.</summary>
        public static void Blobs(int count, int seed, out float[] features, out long[] labels)
        {
            var random = new Random(seed);
            double[,] centres = { { -2, -1 }, { 2, -1 }, { 0, 2 } };
            features = new float[count * 2];
            labels = new long[count];
            for (int i = 0; i < count; i++)
            {
                int c = i % Classes;
                labels[i] = c;
                features[2 * i] = (float)(centres[c, 0] + 0.6 * Gaussian(random));
                features[2 * i + 1] = (float)(centres[c, 1] + 0.6 * Gaussian(random));
            }
        }

        /// <summary>A blob dataset of `count` examples on context.</summary>
        public static Dataset BlobDataset(Context context, int count, int seed)
        {
            float[] x;
            long[] y;
            Blobs(count, seed, out x, out y);
            using (var features = NdArray.FromHost(context, x, count, 2))
            using (var labels = NdArray.FromHost(context, y, count))
                return Dataset.FromArrays(context, features, labels);
        }

        private static double Gaussian(Random random)
        {
            double u = 1.0 - random.NextDouble(), v = random.NextDouble();
            return Math.Sqrt(-2 * Math.Log(u)) * Math.Cos(2 * Math.PI * v);
        }

        /// <summary>A fresh empty folder under the system's temp folder.</summary>
        public static string TempDir()
        {
            string dir = Path.Combine(Path.GetTempPath(), "nnrt-csharp-" + Guid.NewGuid().ToString("N"));
            Directory.CreateDirectory(dir);
            return dir;
        }

        /// <summary>The raw text of a top-level-or-nested field "key": value in JSON (first match), enough
        /// for the flat facts the tests check; null when absent.</summary>
        public static string JsonField(string json, string key)
        {
            var m = Regex.Match(json, "\"" + Regex.Escape(key) + "\"\\s*:\\s*(\"[^\"]*\"|[^,}\\]]+)");
            return m.Success ? m.Groups[1].Value.Trim().Trim('"') : null;
        }

        /// <summary>A numeric JSON field as a double.</summary>
        public static double JsonNumber(string json, string key)
        {
            string text = JsonField(json, key);
            Assert.True(text != null, "no field \"" + key + "\" in " + json);
            return double.Parse(text, CultureInfo.InvariantCulture);
        }
    }
}
