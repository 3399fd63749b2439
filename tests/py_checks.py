"""py_checks.py - the report shared by the Python tests of tests/ (wired as
sh_test, with this file in their data): each check is a (what, got, want)
triple; a line per check, then the count. Standard library only."""


def report(checks):
    """Prints every check, ok or FAIL; returns the exit status: 0 when all
    passed, 1 otherwise."""
    failed = 0
    for what, got, want in checks:
        if got == want:
            print(f"ok   {what}: {got}")
        else:
            failed += 1
            print(f"FAIL {what}: got {got!r}, want {want!r}")
    if failed:
        print(f"{failed} of {len(checks)} checks FAILED")
        return 1
    print(f"all {len(checks)} checks ok")
    return 0
