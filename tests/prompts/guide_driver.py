"""Runs in a track's interpreter (standard library only): each job of the plan executes its code
blocks in order, in a fresh namespace holding ``case_spec``, in a directory of its own, and
writes ``result.json`` there -- ``{"ok": true}``, or the block that raised and its traceback --
so that one failing template never hides the others.

    python guide_driver.py plan.json
"""

import json
import os
import sys
import traceback


def main(plan_path: str) -> None:
    with open(plan_path, encoding="utf-8") as fh:
        plan = json.load(fh)
    for job in plan:
        os.makedirs(job["dir"], exist_ok=True)
        os.chdir(job["dir"])
        namespace = {"__name__": "__main__", "case_spec": job["case_spec"]}
        result = {"ok": True}
        for block in job["blocks"]:
            try:
                exec(compile(block["code"], block["name"], "exec"), namespace)
            except BaseException:  # every failure is the test's to report
                result = {"ok": False, "block": block["name"], "error": traceback.format_exc()[-4000:]}
                break
        with open("result.json", "w", encoding="utf-8") as fh:
            json.dump(result, fh)


if __name__ == "__main__":
    main(sys.argv[1])
