import roomchat
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor

# The application's SDK, set up once at start: spans printed on standard output.
# (`opentelemetry-instrument python app.py` sets one up from the environment instead.)
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter()))
trace.set_tracer_provider(provider)

client = roomchat.Client.from_env()  # ROOMCHAT_PRIVATE_KEY, ROOMCHAT_BASE_URL

with trace.get_tracer("my-backend").start_as_current_span("nightly user report") as span:
    page = client.list_users(limit=50)
    span.set_attribute("report.users", page.total)
provider.shutdown()
# Printed: `GET /consumer/api/v2/users` (kind CLIENT) in `roomchat list_users`
# (kind INTERNAL) in `nightly user report`; the request carried the first's traceparent.
