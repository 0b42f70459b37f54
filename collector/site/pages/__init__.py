"""Page builders: each turns SiteData into a typed page context and its charts."""
