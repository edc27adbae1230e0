"""Native ground truth: link fixtures with recording C stubs and compare with emu."""
