using System;
using System.Collections.Generic;
using System.Linq;

namespace Nnrt.Tests
{
    /// <summary>Thrown by a failed check.</summary>
    public sealed class AssertionException : Exception
    {
        /// <summary>Creates the failure with its message.</summary>
        public AssertionException(string message) : base(message) { }
    }

    /// <summary>The checks the tests use.</summary>
    public static class Assert
    {
        /// <summary>Fails with message unless condition holds.</summary>
        public static void True(bool condition, string message)
        {
            if (!condition) throw new AssertionException(message);
        }

        /// <summary>Fails unless expected.Equals(actual).</summary>
        public static void Equal<T>(T expected, T actual, string what)
        {
            if (!EqualityComparer<T>.Default.Equals(expected, actual))
                throw new AssertionException(string.Format("{0}: expected {1}, got {2}", what, expected, actual));
        }

        /// <summary>Fails unless both sequences hold equal elements in the same order.</summary>
        public static void Sequence<T>(IEnumerable<T> expected, IEnumerable<T> actual, string what)
        {
            var e = expected.ToArray();
            var a = actual.ToArray();
            if (!e.SequenceEqual(a))
                throw new AssertionException(string.Format("{0}: expected [{1}], got [{2}]", what,
                                                           string.Join(", ", e), string.Join(", ", a)));
        }

        /// <summary>Fails unless text contains part.</summary>
        public static void Contains(string part, string text, string what)
        {
            if (text == null || !text.Contains(part))
                throw new AssertionException(string.Format("{0}: expected to contain \"{1}\", got \"{2}\"", what, part, text));
        }

        /// <summary>Runs action and returns the exception of type T it throws; fails if it throws nothing
        /// or something else.</summary>
        public static T Throws<T>(Action action, string what) where T : Exception
        {
            try
            {
                action();
            }
            catch (T e)
            {
                return e;
            }
            catch (Exception e)
            {
                throw new AssertionException(string.Format("{0}: expected {1}, got {2}", what, typeof(T).Name, e));
            }
            throw new AssertionException(string.Format("{0}: expected {1}, nothing was thrown", what, typeof(T).Name));
        }

        /// <summary>Runs action, expects an NnrtException with the given status and a message containing
        /// every one of parts, and returns it.</summary>
        public static NnrtException Fails(Status status, Action action, string what, params string[] parts)
        {
            var e = Throws<NnrtException>(action, what);
            Equal(status, e.Status, what + " (status; message: " + e.Message + ")");
            foreach (var part in parts) Contains(part, e.Message, what + " (message)");
            return e;
        }
    }
}
