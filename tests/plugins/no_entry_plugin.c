/* A shared library that is not an nnrt backend: it lacks nnrt_backend_entry. */
int nnrt_test_not_a_backend(void) { return 42; }
