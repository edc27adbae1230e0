"""Scenarios: YAML files that name objects, configure the stubs and state expectations."""
