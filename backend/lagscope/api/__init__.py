"""The HTTP API: FastAPI app, thin routers over services, one error mapping, auth."""
