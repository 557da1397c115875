"""runner.py MODULE — `python -m unittest -v MODULE`, recording each test's outcome.

Run by conformance.py under a Paddle venv, from the test file's folder. It is
`python -m unittest` (same loader, same TextTestRunner with its warnings handling, the
current directory first on sys.path), with two changes. The result class also appends one
JSON object per line to the file named by $P2S_CONFORMANCE_OUT, flushed as it goes, so a
crash still leaves the outcomes of the tests that finished and the id of the test that was
running. And before each test it seeds the framework's and numpy's generators (SEED), when
the test module has imported them: the tests draw their inputs with an unseeded
`paddle.randn` and compare gradients at rtol 1e-5, so unseeded they fail now and then on an
unlucky draw (seen on 3.2.2's TestPyLayerInsideNet.test_inplace, 2 runs in 150, untranspiled),
and a transpiled copy would fail where its untranspiled twin drew other inputs. Seeded, both
copies of a test get the same inputs on every run. The records:

    {"event": "start", "id": ID}
    {"event": "outcome", "id": ID, "outcome": "pass"|"fail"|"error"|"skip"|
     "expected_failure"|"unexpected_success", "detail": TRACEBACK_OR_REASON}

Standard library only.
"""

import json
import os
import sys
import unittest

SEED = 2023   # the tests' own numpy seed (np.random.seed(SEED) at import)


class Recorder(unittest.TextTestResult):
    out = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._current = {}

    def _write(self, record):
        if Recorder.out is None:
            Recorder.out = open(os.environ["P2S_CONFORMANCE_OUT"], "a", encoding="utf-8")
        Recorder.out.write(json.dumps(record) + "\n")
        Recorder.out.flush()

    def _set(self, test, outcome, detail=""):
        if isinstance(test, unittest.case._SubTest):
            test = test.test_case
        elif not isinstance(test, unittest.TestCase):
            # setUpClass / setUpModule errors (an _ErrorHolder): no startTest for them.
            self._write({"event": "outcome", "id": test.id(), "outcome": outcome,
                         "detail": detail})
            return
        prev = self._current.get(test.id())
        # A failing subtest makes the test fail; a later success must not hide it.
        if prev is None or prev[0] in ("pass", "skip"):
            self._current[test.id()] = (outcome, detail)

    def startTest(self, test):
        self._write({"event": "start", "id": test.id()})
        for name in ("paddle", "numpy.random"):
            module = sys.modules.get(name)
            if module is not None:
                module.seed(SEED)
        super().startTest(test)

    def stopTest(self, test):
        super().stopTest(test)
        outcome, detail = self._current.pop(test.id(), ("error", "no outcome reported"))
        self._write({"event": "outcome", "id": test.id(), "outcome": outcome, "detail": detail})

    def addSuccess(self, test):
        super().addSuccess(test)
        self._set(test, "pass")

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._set(test, "fail", self._exc_info_to_string(err, test))

    def addError(self, test, err):
        super().addError(test, err)
        self._set(test, "error", self._exc_info_to_string(err, test))

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self._set(test, "skip", reason)

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        self._set(test, "expected_failure", self._exc_info_to_string(err, test))

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self._set(test, "unexpected_success")

    def addSubTest(self, test, subtest, err):
        super().addSubTest(test, subtest, err)
        if err is not None:
            kind = "fail" if issubclass(err[0], test.failureException) else "error"
            self._set(subtest, kind, "%s\n%s" % (subtest.id(), self._exc_info_to_string(err, test)))


class Runner(unittest.TextTestRunner):
    resultclass = Recorder


def main():
    if len(sys.argv) != 2 or "P2S_CONFORMANCE_OUT" not in os.environ:
        sys.exit("usage: P2S_CONFORMANCE_OUT=FILE python runner.py MODULE")
    # What `python -m unittest` does: the current directory comes first on sys.path.
    sys.path[0] = os.getcwd()
    unittest.main(module=None, argv=["python -m unittest", "-v", sys.argv[1]],
                  testRunner=Runner, exit=True)


if __name__ == "__main__":
    main()
