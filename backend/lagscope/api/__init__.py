"""The HTTP API: FastAPI app, thin routers over the contexts, one error mapping, auth."""
