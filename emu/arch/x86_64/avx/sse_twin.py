"""Placeholder."""
def handler(insn, decoded):
    raise decoded.fail()
