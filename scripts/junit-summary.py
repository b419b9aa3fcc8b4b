"""Prints one line per test case of JUnit XML reports (legacy format), and for each failure the
first 600 characters of its message: a summary small enough to bring back from the GPU host.
    python3 scripts/junit-summary.py REPORTS_DIR"""
import glob
import sys
import xml.etree.ElementTree as ET

passed = failed = skipped = 0
for f in sorted(glob.glob(sys.argv[1] + "/*.xml")):
    for case in ET.parse(f).getroot().iter("testcase"):
        name = case.get("classname", "").split(".")[-1] + "." + case.get("name", "")
        bad = case.find("failure") if case.find("failure") is not None else case.find("error")
        if bad is not None:
            failed += 1
            print(f"FAILED {name} ({case.get('time')} s): {(bad.get('message') or bad.text or '')[:600]}")
        elif case.find("skipped") is not None:
            skipped += 1
            print(f"SKIPPED {name}")
        else:
            passed += 1
            print(f"ok {name} ({case.get('time')} s)")
print(f"SUMMARY {passed} passed, {failed} failed, {skipped} skipped")
