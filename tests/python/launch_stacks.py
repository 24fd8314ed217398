"""Launches through _gpuperf_fakecuda from known functions at known lines, for
launch_stacks_test.sh: the recorded stacks must show main -> Model.forward -> helper with
these lines (the lines marked "# line:" are looked up by the test, not hard-coded).

Usage: python3 launch_stacks.py DIR_OF_THE_EXTENSION
"""
import sys
import time

sys.path.insert(0, sys.argv[1])
import _gpuperf_fakecuda as cuda  # noqa: E402


def helper(step):
    cuda.launch("_Z6matmulv" if step % 2 == 0 else "_Z7softmaxv")  # line:helper


class Model:
    def __init__(self):
        cuda.malloc(1 << 20)  # line:init

    def forward(self, step):
        helper(step)  # line:forward


def main():
    cuda.init()
    model = Model()  # line:construct
    for step in range(4):
        model.forward(step)  # line:main
    time.sleep(0.05)  # the test records with --flush-period 10: new stacks in a later cycle
    cuda.launch("_Z5laterv")  # line:later
    cuda.launch_from_native_thread("_Z9nativeKerv", "native_worker")
    cuda.launch_from_native_thread("_Z8backwardv", "pt_autograd_0")
    cuda.synchronize()


main()  # line:module
