"""Durable SQLite inbox store for cao"""
