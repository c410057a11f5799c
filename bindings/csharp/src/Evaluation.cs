using System;

namespace Nnrt
{
    /// <summary>Metrics of a model on a dataset (nnrt_evaluation), from <see cref="Model.Evaluate(Dataset)"/>.</summary>
    public sealed class Evaluation : IDisposable
    {
        /// <summary>The owned native handle.</summary>
        public EvaluationHandle Handle { get; private set; }

        internal Evaluation(EvaluationHandle handle) { Handle = handle; }

        /// <summary>The fraction of examples classified right, or NaN for a regression evaluation.</summary>
        public double Accuracy
        {
            get
            {
                double accuracy;
                Check.Ok(Native.nnrt_evaluation_accuracy(Handle, out accuracy));
                return accuracy;
            }
        }

        /// <summary>The evaluation as JSON. Classification: "examples", "classes", "accuracy", "per_class",
        /// "macro_avg", "weighted_avg", "confusion_matrix". Regression: "examples", "mse", "mae", "r2".</summary>
        public string Report()
        {
            return Utf8.Query((byte[] buf, UIntPtr cap, out UIntPtr len) =>
                              Native.nnrt_evaluation_report(Handle, buf, cap, out len));
        }

        /// <summary>Releases the evaluation.</summary>
        public void Dispose() { Handle.Dispose(); }
    }
}
