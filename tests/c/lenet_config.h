/* The seed's LeNet (API.md's config, examples/lenet.json) as a C string, for the C tests. Its
** parameters are layer0.weight/bias (conv1), layer2 (conv2), layer4 (fc), layer5 (output). */
#ifndef NNRT_TEST_LENET_CONFIG_H
#define NNRT_TEST_LENET_CONFIG_H

#define LENET_CONFIG                                                                                          \
  "{\"input\": [1, 28, 28], \"seed\": 123, \"layers\": ["                                                     \
  " {\"type\": \"conv2d\", \"filters\": 20, \"kernel\": [5, 5], \"stride\": [1, 1], \"activation\": \"relu\", " \
  "\"init\": \"xavier\"},"                                                                                     \
  " {\"type\": \"maxpool2d\", \"kernel\": [2, 2], \"stride\": [2, 2]},"                                       \
  " {\"type\": \"conv2d\", \"filters\": 50, \"kernel\": [5, 5], \"stride\": [2, 2], \"activation\": \"relu\", " \
  "\"init\": \"xavier\"},"                                                                                     \
  " {\"type\": \"maxpool2d\", \"kernel\": [2, 2], \"stride\": [2, 2]},"                                       \
  " {\"type\": \"dense\", \"units\": 200, \"activation\": \"relu\", \"init\": \"xavier\"},"                   \
  " {\"type\": \"output\", \"units\": 10, \"activation\": \"softmax\", \"loss\": \"nll\", \"init\": \"xavier\"}]}"

#endif
