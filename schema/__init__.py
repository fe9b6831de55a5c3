"""The project's JSON Schemas for ACP v1, installed as package data, and their tooling."""
