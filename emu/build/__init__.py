"""Scenarios that build their object: a user's CuTe DSL kernel exported on demand and cached."""
