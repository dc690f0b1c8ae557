"""textgyms/Search-v1: an emulated web (FictionWeb, GeoWeb, your own JSONL) for search agents."""
