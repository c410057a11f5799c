using System;

namespace Nnrt
{
    /// <summary>Examples and labels in host memory, ready for batching (nnrt_dataset). A trainer using a
    /// dataset keeps it alive.</summary>
    public sealed class Dataset : IDisposable
    {
        /// <summary>The owned native handle.</summary>
        public DatasetHandle Handle { get; private set; }

        private Dataset(DatasetHandle handle) { Handle = handle; }

        /// <summary>A dataset from arrays whose dimension 0 counts the examples: features [N, ...] of any
        /// numeric dtype, labels [N] of class indices (I32, I64 or U8) or [N, ...] float targets. The
        /// data is copied, so the arrays may be disposed afterwards.</summary>
        /// <exception cref="NnrtException">Shape when the example counts differ; DType for BOOL labels;
        /// InvalidArgument for a negative class or NaN/Inf features.</exception>
        public static Dataset FromArrays(Context context, NdArray features, NdArray labels)
        {
            DatasetHandle handle;
            Check.Ok(Native.nnrt_dataset_from_arrays(context.Handle, features.Handle, labels.Handle, out handle));
            return new Dataset(handle);
        }

        /// <summary>Loads a dataset described by a JSON spec: {"format": "idx", "images", "labels",
        /// "scale", "limit"} or {"format": "csv", "path", "label_column", "header", "limit"}.</summary>
        /// <exception cref="NnrtException">Io when a file cannot be read (the message names it); Corrupt
        /// for a malformed file (the message gives the file and the line or offset).</exception>
        public static Dataset Load(Context context, string specJson)
        {
            DatasetHandle handle;
            Check.Ok(Native.nnrt_dataset_load(context.Handle, Utf8.Encode(specJson), out handle));
            return new Dataset(handle);
        }

        /// <summary>Loads IDX files (MNIST, Fashion-MNIST; plain or gzip). Images are scaled by `scale`
        /// when batched; limit > 0 keeps only the first examples.</summary>
        public static Dataset LoadIdx(Context context, string imagesPath, string labelsPath, long limit = 0,
                                      double scale = 1.0 / 255)
        {
            var spec = new JsonObject().Add("format", "idx").Add("images", imagesPath).Add("labels", labelsPath)
                                       .Add("scale", scale);
            if (limit > 0) spec.Add("limit", limit);
            return Load(context, spec.ToString());
        }

        /// <summary>Loads a CSV file of numbers, one example per line; labelColumn (-1: the last) holds the
        /// class index, every other column is a feature.</summary>
        public static Dataset LoadCsv(Context context, string path, long labelColumn = 0, bool header = false,
                                      long limit = 0)
        {
            var spec = new JsonObject().Add("format", "csv").Add("path", path).Add("label_column", labelColumn)
                                       .Add("header", header);
            if (limit > 0) spec.Add("limit", limit);
            return Load(context, spec.ToString());
        }

        /// <summary>The number of examples.</summary>
        public long Count
        {
            get
            {
                long examples;
                Check.Ok(Native.nnrt_dataset_size(Handle, out examples));
                return examples;
            }
        }

        /// <summary>Copies examples [start, start + count) into new arrays on context's device: returns
        /// the features as F32 [count, ...] (scaled as the spec says), and the labels as I64 class
        /// indices [count] or F32 targets.</summary>
        /// <exception cref="NnrtException">InvalidArgument for a range outside [0, Count].</exception>
        public NdArray Examples(Context context, long start, long count, out NdArray labels)
        {
            ArrayHandle x, y;
            Check.Ok(Native.nnrt_dataset_examples(context.Handle, Handle, start, count, out x, out y));
            labels = new NdArray(context, y);
            return new NdArray(context, x);
        }

        /// <summary>Like <see cref="Examples"/> but copies only the features.</summary>
        public NdArray Features(Context context, long start, long count)
        {
            ArrayHandle x;
            Check.Ok(Native.nnrt_dataset_examples_no_labels(context.Handle, Handle, start, count, out x, IntPtr.Zero));
            return new NdArray(context, x);
        }

        /// <summary>Releases this reference to the dataset.</summary>
        public void Dispose() { Handle.Dispose(); }
    }
}
