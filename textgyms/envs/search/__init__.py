"""textgyms/Search-v0: an emulated web (FictionWeb, GeoWeb, your own JSONL) for search agents."""
