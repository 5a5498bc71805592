"""Built-in agent profiles, packaged with the kernel (``code_supervisor``, ``developer``, ``reviewer``).

They are the last place a profile name is looked up; a profile of the same name in the local store,
a provider folder or ``agent-context`` shadows them.
"""
