"""Task generation for the Search env (see :mod:`textgyms.envs.search.tasks.generate`)."""
