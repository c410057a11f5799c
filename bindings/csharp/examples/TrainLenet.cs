// Trains the classic LeNet on Fashion-MNIST through the C# binding, printing progress and the
// evaluation on the test set.
//
//   bindings/csharp/build
//   mono bindings/csharp/bin/TrainLenet.exe [data folder] [epochs] [training examples]
//
// The data folder holds train-images-idx3-ubyte.gz and friends (default: Debian's
// dataset-fashion-mnist, /usr/share/datasets/fashion-mnist); epochs defaults to 1, and a limit of
// 0 (the default) trains on all 60000 examples.
using System;
using System.IO;
using Nnrt;

/// <summary>The LeNet example program.</summary>
public static class TrainLenet
{
    // The project's one LeNet and its trainer options (Adam, a cosine schedule over 8 epochs):
    // examples/lenet.json and examples/lenet_trainer.json, embedded by bindings/csharp/build.
    private static readonly string LenetConfig = Resource("lenet.json");
    private static readonly string TrainerOptions = Resource("lenet_trainer.json");

    private static string Resource(string name)
    {
        using (var stream = typeof(TrainLenet).Assembly.GetManifestResourceStream(name))
        {
            if (stream == null)
                throw new InvalidOperationException(name + " is not embedded: build with bindings/csharp/build");
            using (var reader = new StreamReader(stream))
                return reader.ReadToEnd();
        }
    }

    /// <summary>Entry point: [data folder] [epochs] [training examples].</summary>
    public static int Main(string[] args)
    {
        string dir = args.Length > 0 ? args[0] : "/usr/share/datasets/fashion-mnist";
        int epochs = args.Length > 1 ? int.Parse(args[1]) : 1;
        long limit = args.Length > 2 ? long.Parse(args[2]) : 0;
        try
        {
            Train(dir, epochs, limit);
            return 0;
        }
        catch (NnrtException e)
        {
            Console.Error.WriteLine("{0}: {1}", Library.StatusName(e.Status), e.Message);
            return 1;
        }
    }

    private static void Train(string dir, int epochs, long limit)
    {
        using (var context = new Context())
        using (var train = Dataset.LoadIdx(context, Path.Combine(dir, "train-images-idx3-ubyte.gz"),
                                           Path.Combine(dir, "train-labels-idx1-ubyte.gz"), limit))
        using (var test = Dataset.LoadIdx(context, Path.Combine(dir, "t10k-images-idx3-ubyte.gz"),
                                          Path.Combine(dir, "t10k-labels-idx1-ubyte.gz")))
        using (var model = new Model(context, LenetConfig))
        using (var trainer = new Trainer(model, TrainerOptions))
        {
            Console.WriteLine("nnrt {0}: training LeNet on {1} examples, {2} parameters, {3} epoch(s)",
                              Library.Version, train.Count, model.ParamCount, epochs);
            trainer.SetProgress(PrintProgress);
            trainer.Fit(train, test, epochs);

            using (var evaluation = model.Evaluate(test))
            {
                Console.WriteLine("evaluation: " + evaluation.Report());
                Console.WriteLine("test_accuracy={0:F4}", evaluation.Accuracy);
            }
        }
    }

    private static bool PrintProgress(Progress p)
    {
        if (p.EpochEnd)
            Console.WriteLine("epoch {0} done: {1:F0} images/s, test accuracy {2:F4}", p.Epoch + 1,
                              p.ExamplesPerSecond, p.ValidationScore);
        else if (p.Batch % 100 == 0)
            Console.WriteLine("epoch {0} batch {1,4}/{2}  loss {3:F4}  {4:F0} images/s", p.Epoch + 1, p.Batch,
                              p.BatchesPerEpoch, p.Loss, p.ExamplesPerSecond);
        return false; // keep training
    }
}
