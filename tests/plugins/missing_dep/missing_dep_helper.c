/* The dependency of the missing-dependency test plugin. */
int nnrt_test_helper_value(void) { return 1; }
