"""The offline mock agent CLI and its cao provider"""
