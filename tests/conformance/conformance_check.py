"""conformance_check.py — the check decorator of the python conformance scripts (imported).

@check("NAME") runs the function at once, prints PASS/FAIL NAME (with the traceback's tail on
failure) and records the outcome in `results`; a failure does not stop the script.
"""
import traceback

results = []


def check(name):
    def deco(fn):
        try:
            fn()
            results.append(True)
            print("PASS:", name, flush=True)
        except Exception:  # noqa: BLE001 - report every failure and go on
            results.append(False)
            print("FAIL:", name, flush=True)
            for line in traceback.format_exc().splitlines()[-8:]:
                print("    " + line, flush=True)
        return fn

    return deco
