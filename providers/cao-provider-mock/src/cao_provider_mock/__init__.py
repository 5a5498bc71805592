"""The offline mock agent CLI (``mock_cli``) and its cao provider.

Nothing is imported here: the agent program's start-up time depends on it.
"""
