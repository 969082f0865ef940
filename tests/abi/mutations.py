"""The ABI check's own test (tests/c/run.sh runs it): each kind of break, made in a scratch
copy of include/roomchat.h and of the library, must fail tests/abi/check.sh, naming what
broke; an unchanged copy and additions must pass it.

The scratch library is a shim: the probe of its header (tests/abi/probe.py) compiled by cc
into a shared object, which exports every function the header declares with the header's
prototypes, as libroomchat.so does. check.sh reads only the library's exported symbols (it
strips the debug info), so the shim stands for a library built from the mutated source at a
fraction of the cost (the Rust build of one takes minutes).

usage: mutations.py <scratch dir>   (exit 0: every case as expected)
prints one line per case and `abi-mutations: N passed, M failed`
"""

import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the checkout
from probe import probe  # noqa: E402 (tests/abi/probe.py, beside this file)

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
scratch = os.path.abspath(sys.argv[1])
header = open(os.path.join(root, "include", "roomchat.h")).read()


class MutationMissed(Exception):
    """The header no longer holds what a mutation edits: the case must be updated."""


def replace_once(text, pattern, replacement, flags=0):
    found = len(re.findall(pattern, text, flags))
    if found != 1:
        raise MutationMissed(f"{pattern!r} occurs {found} times in roomchat.h, not once")
    return re.sub(pattern, replacement, text, count=1, flags=flags)


def in_prototype(function, old, new):
    """An edit of one parameter of `function`'s declaration (old must occur in it once)."""

    def edit(text):
        pattern = r"(?m)^[A-Za-z_][\w \*]*?\b" + function + r"\([^()]*\);"
        found = re.findall(pattern, text)
        if len(found) != 1:
            raise MutationMissed(f"{function} is declared {len(found)} times, not once")
        prototype = found[0]
        return text.replace(prototype, replace_once(prototype, re.escape(old), new), 1)

    return edit


def removed_function(function):
    return lambda text: replace_once(text, r"(?m)^[A-Za-z_][\w \*]*?\b" + function + r"\([^()]*\);\n", "")


def unchanged(text):
    return text


# (what the case is, its header's edit, its library's edit, what the check's report must
# name: None when the check must pass). Functions and enumerators that 0.1.0 published.
CASES = [
    ("unchanged", unchanged, unchanged, None),
    (
        "a function added",
        lambda text: replace_once(
            text,
            r"(?m)^(roomchat_result roomchat_client_list_users\()",
            "roomchat_result roomchat_client_abi_mutation_added(const struct roomchat_client *client,"
            " uint32_t count);\n\n\\1",
        ),
        None,
        None,
    ),
    (
        "an enumerator added",
        lambda text: replace_once(
            text, r"(?m)^(  ROOMCHAT_RESULT_UNKNOWN = 103,\n)", "\\1  ROOMCHAT_RESULT_ABI_MUTATION_ADDED = 104,\n"
        ),
        None,
        None,
    ),
    (
        "a parameter widened (uint32_t to uint64_t)",
        in_prototype("roomchat_client_list_users", "uint32_t limit", "uint64_t limit"),
        None,
        "roomchat_client_list_users",
    ),
    (
        "a parameter narrowed (uint64_t to uint32_t)",
        in_prototype("roomchat_client_list_users", "uint64_t skip", "uint32_t skip"),
        None,
        "roomchat_client_list_users",
    ),
    (
        "a parameter's signedness (uint32_t to int32_t)",
        in_prototype("roomchat_client_list_users", "uint32_t limit", "int32_t limit"),
        None,
        "roomchat_client_list_users",
    ),
    (
        "a pointer to another opaque type",
        in_prototype("roomchat_client_list_users", "struct roomchat_user_page **", "struct roomchat_user **"),
        None,
        "roomchat_client_list_users",
    ),
    (
        "a parameter added",
        in_prototype(
            "roomchat_client_list_users", "uint64_t skip,", "uint64_t skip,\n    uint32_t abi_mutation_added,"
        ),
        None,
        "roomchat_client_list_users",
    ),
    (
        "a public struct's field widened",
        lambda text: replace_once(
            text, r"(struct roomchat_rate_limit_state \{[^}]*?)uint32_t limit;", "\\1uint64_t limit;", re.S
        ),
        None,
        "roomchat_rate_limit_state",
    ),
    (
        "an enumerator removed",
        lambda text: replace_once(text, r"(?m)^  ROOMCHAT_RESULT_CANCELLED = 15,\n", ""),
        None,
        "ROOMCHAT_RESULT_CANCELLED",
    ),
    (
        "an enumerator renumbered",
        lambda text: replace_once(text, r"(?m)^  ROOMCHAT_RESULT_TLS = 17,$", "  ROOMCHAT_RESULT_TLS = 19,"),
        None,
        "ROOMCHAT_RESULT_TLS",
    ),
    (
        "a function removed",
        removed_function("roomchat_client_list_users"),
        None,
        "roomchat_client_list_users",
    ),
    (
        "a function removed from the library only",
        unchanged,
        removed_function("roomchat_client_list_users"),
        "roomchat_client_list_users",
    ),
]


def run(case):
    """Returns (passed, line, the check's output when the case failed)."""
    number, (what, header_edit, library_edit, must_name) = case
    work = os.path.join(scratch, f"case-{number:02d}")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(os.path.join(work, "include"))
    os.makedirs(os.path.join(work, "library", "include"))
    try:
        mutated = header_edit(header)
        library_header = (library_edit or header_edit)(header)
    except MutationMissed as missed:
        return False, f"{what}: the mutation could not be made: {missed}", ""
    if (mutated == header) != (header_edit is unchanged):
        return False, f"{what}: the mutation changed nothing", ""
    open(os.path.join(work, "include", "roomchat.h"), "w").write(mutated)
    # The shim library: what the (mutated) header declares, defined and exported.
    library = os.path.join(work, "library")
    open(os.path.join(library, "include", "roomchat.h"), "w").write(library_header)
    shim_source = os.path.join(library, "shim.c")
    shim = os.path.join(library, "libroomchat.so")
    open(shim_source, "w").write(probe(library_header)[0])
    compile_shim = ["cc", "-std=c99", "-g", "-O0", "-shared", "-fPIC", "-w", "-I" + os.path.join(library, "include")]
    subprocess.run(compile_shim + [shim_source, "-o", shim], check=True)
    check_sh = os.path.join(root, "tests", "abi", "check.sh")
    check = subprocess.run(
        ["bash", check_sh, shim, os.path.join(work, "build"), os.path.join(work, "include")],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    status = check.returncode
    if must_name is None:
        if status == 0:
            return True, f"{what}: the check passes, as it must", ""
        return False, f"{what}: the check FAILED (exit {status}) although nothing broke", check.stdout
    if status == 0:
        return False, f"{what}: the check PASSED although the ABI broke", check.stdout
    if not re.search(r"\b" + re.escape(must_name) + r"\b", check.stdout):
        return False, f"{what}: the check failed (exit {status}) but its report never names {must_name}", check.stdout
    return True, f"{what}: the check fails (exit {status}) and names {must_name}", ""


def main():
    started = time.monotonic()
    os.makedirs(scratch, exist_ok=True)
    # Two at a time: each case is a few short processes (cc, abidiff twice).
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(run, enumerate(CASES)))
    passed = failed = 0
    for ok, line, output in results:
        print(f"{'ok  ' if ok else 'FAIL'} {line}")
        if not ok and output:
            print("     " + output.rstrip().replace("\n", "\n     "))
        passed += ok
        failed += not ok
    print(f"the ABI check's mutation test took {time.monotonic() - started:.1f} s")
    print(f"abi-mutations: {passed} passed, {failed} failed")
    sys.exit(0 if failed == 0 else 1)


if __name__ == "__main__":
    main()
