"""tmux terminal backend for cao"""
