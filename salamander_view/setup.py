"""ament_python package setup: everything is declared in setup.cfg."""

from setuptools import setup

setup()
