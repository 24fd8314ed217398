"""Autograd ops through _gpuperf_fakecuda and the fake libtorch (fake_torch.cc), for
autograd_link_test.sh: each backward kernel must show the Python frames of its forward op,
then [autograd backward], then the engine thread's own frames. The lines marked "# line:"
are looked up by the test.

Usage: python3 autograd_link.py DIR_OF_THE_EXTENSION FAKE_LIBTORCH
"""
import sys

sys.path.insert(0, sys.argv[1])
import _gpuperf_fakecuda as cuda  # noqa: E402


def linear():
    cuda.op("_Z6linearv", "_Z11linear_gradv")  # line:linear


def attention():
    cuda.op("_Z9attentionv", "_Z14attention_gradv")  # line:attention
    cuda.launch("_Z7softmaxv")  # the op's second kernel: not where its node was made


def reshape():
    cuda.view_op("_Z12reshape_gradv")  # launches nothing: its backward stays unlinked


def forward():
    linear()  # line:forward_linear
    reshape()
    attention()  # line:forward_attention


def main():
    cuda.load_torch(sys.argv[2])
    cuda.init()
    references = 0
    for _ in range(3):
        forward()  # line:main
        references = max(references, cuda.backward())
    cuda.synchronize()
    print("most references to a node after its backward:", references)


main()  # line:module
