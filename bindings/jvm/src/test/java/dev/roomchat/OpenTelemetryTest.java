package dev.roomchat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.roomchat.testing.RoomchatEmulator;
import dev.roomchat.testing.RoomchatExtension;
import io.opentelemetry.api.GlobalOpenTelemetry;
import io.opentelemetry.api.baggage.propagation.W3CBaggagePropagator;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.context.propagation.TextMapPropagator;
import io.opentelemetry.context.propagation.TextMapSetter;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.metrics.SdkMeterProvider;
import io.opentelemetry.sdk.metrics.data.HistogramPointData;
import io.opentelemetry.sdk.metrics.data.LongPointData;
import io.opentelemetry.sdk.metrics.data.MetricData;
import io.opentelemetry.sdk.testing.exporter.InMemoryMetricReader;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.ReadWriteSpan;
import io.opentelemetry.sdk.trace.ReadableSpan;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.SpanProcessor;
import io.opentelemetry.sdk.trace.data.EventData;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The package's OpenTelemetry against the SDK's in-memory exporters: the same
 * spans, attributes, events and metrics as the other languages (core's guide,
 * "Observability"), trace context on the wire per attempt (the emulator's
 * journal), propagation turned off, the calls in flight counted from
 * dispatch, a throwing span processor or propagator costing only its part,
 * and no secret in any of it.
 */
@ExtendWith(RoomchatExtension.class)
class OpenTelemetryTest {
  private static final String USERS = "/consumer/api/v2/users";

  private InMemorySpanExporter spans;
  private InMemoryMetricReader metrics;
  private OpenTelemetrySdk sdk;

  @BeforeEach
  void sdk(RoomchatEmulator emulator) {
    emulator.reset();
    spans = InMemorySpanExporter.create();
    metrics = InMemoryMetricReader.create();
    sdk = sdk(SimpleSpanProcessor.create(spans), W3CTraceContextPropagator.getInstance());
  }

  private OpenTelemetrySdk sdk(SpanProcessor processor, TextMapPropagator propagator) {
    return OpenTelemetrySdk.builder()
        .setTracerProvider(SdkTracerProvider.builder().addSpanProcessor(processor).build())
        .setMeterProvider(SdkMeterProvider.builder().registerMetricReader(metrics).build())
        .setPropagators(ContextPropagators.create(TextMapPropagator.composite(propagator, W3CBaggagePropagator.getInstance())))
        .build();
  }

  @AfterEach
  void close() {
    sdk.close();
  }

  private static <T> T attr(SpanData span, AttributeKey<T> key) {
    return span.getAttributes().get(key);
  }

  private List<SpanData> named(String name) {
    return spans.getFinishedSpanItems().stream().filter(s -> s.getName().equals(name)).collect(Collectors.toList());
  }

  private MetricData metric(Collection<MetricData> all, String name) {
    return all.stream().filter(m -> m.getName().equals(name)).findFirst().orElse(null);
  }

  /** The request headers the emulator received, per request, oldest first (names in lower case). */
  @SuppressWarnings("unchecked")
  private static List<Map<String, String>> sentHeaders(RoomchatEmulator emulator) {
    List<Map<String, String>> out = new ArrayList<>();
    for (Object entry : (List<Object>) ((Map<String, Object>) emulator.admin("GET", "/journal", null)).get("entries")) {
      Map<String, String> headers = new java.util.LinkedHashMap<>();
      for (Object pair : (List<Object>) ((Map<String, Object>) entry).get("headers")) {
        List<Object> p = (List<Object>) pair;
        headers.put((String) p.get(0), (String) p.get(1));
      }
      out.add(headers);
    }
    return out;
  }

  private static void fault429(RoomchatEmulator emulator) {
    emulator.addFault(Map.of("method", "GET", "path", USERS, "times", 1,
        "action", Map.of("kind", "respond", "status", 429, "body", "{\"message\":\"slow down\"}", "headers", Map.of("Retry-After", "0"))));
  }

  @Test
  void aRetriedCallIsASpanOverTwoAttemptSpansWithTraceContextOnEachRequest(RoomchatEmulator emulator) {
    emulator.seedUsers(3);
    fault429(emulator);
    try (RoomchatClient client = emulator.clientBuilder().openTelemetry(sdk).build()) {
      Span parent = sdk.getTracer("app").spanBuilder("handle request").startSpan();
      try (Scope ignored = parent.makeCurrent()) {
        assertEquals(3, client.listUsers().data().size());
      } finally {
        parent.end();
      }
      SpanData app = named("handle request").get(0);
      SpanData call = named("roomchat list_users").get(0);
      assertEquals(SpanKind.INTERNAL, call.getKind());
      assertEquals(app.getSpanId(), call.getParentSpanId(), "the call is a child of the span current where it was asked for");
      assertEquals(app.getTraceId(), call.getTraceId());
      assertEquals("list_users", attr(call, AttributeKey.stringKey(TelemetryNames.ATTR_ROOMCHAT_OPERATION)));
      assertEquals(2L, attr(call, AttributeKey.longKey(TelemetryNames.ATTR_ROOMCHAT_ATTEMPTS)));
      assertNotNull(attr(call, AttributeKey.doubleKey(TelemetryNames.ATTR_ROOMCHAT_RETRY_WAIT_DURATION)));
      assertNotNull(attr(call, AttributeKey.doubleKey(TelemetryNames.ATTR_ROOMCHAT_RATE_LIMIT_WAIT_DURATION)));
      assertEquals(StatusCode.UNSET, call.getStatus().getStatusCode());
      EventData retry = call.getEvents().stream().filter(e -> e.getName().equals(TelemetryNames.EVENT_ROOMCHAT_RETRY)).findFirst().orElseThrow();
      assertEquals("429", retry.getAttributes().get(AttributeKey.stringKey(TelemetryNames.ATTR_ROOMCHAT_RETRY_REASON)));
      assertEquals(1L, retry.getAttributes().get(AttributeKey.longKey(TelemetryNames.ATTR_ROOMCHAT_ATTEMPT)));
      assertEquals(429L, retry.getAttributes().get(AttributeKey.longKey(TelemetryNames.ATTR_HTTP_RESPONSE_STATUS_CODE)));

      List<SpanData> attempts = named("GET " + USERS);
      assertEquals(2, attempts.size());
      attempts.sort(java.util.Comparator.comparingLong(SpanData::getStartEpochNanos));
      SpanData first = attempts.get(0);
      SpanData second = attempts.get(1);
      for (SpanData a : attempts) {
        assertEquals(SpanKind.CLIENT, a.getKind());
        assertEquals(call.getSpanId(), a.getParentSpanId());
        assertEquals("GET", attr(a, AttributeKey.stringKey(TelemetryNames.ATTR_HTTP_REQUEST_METHOD)));
        assertEquals(USERS, attr(a, AttributeKey.stringKey(TelemetryNames.ATTR_URL_TEMPLATE)));
        assertEquals("127.0.0.1", attr(a, AttributeKey.stringKey(TelemetryNames.ATTR_SERVER_ADDRESS)));
        assertEquals((long) java.net.URI.create(emulator.baseUrl()).getPort(), attr(a, AttributeKey.longKey(TelemetryNames.ATTR_SERVER_PORT)));
        assertEquals("1.1", attr(a, AttributeKey.stringKey(TelemetryNames.ATTR_NETWORK_PROTOCOL_VERSION)));
        assertTrue(attr(a, AttributeKey.stringKey(TelemetryNames.ATTR_URL_FULL)).startsWith(emulator.baseUrl() + USERS));
      }
      assertEquals(429L, attr(first, AttributeKey.longKey(TelemetryNames.ATTR_HTTP_RESPONSE_STATUS_CODE)));
      assertEquals("429", attr(first, AttributeKey.stringKey(TelemetryNames.ATTR_ERROR_TYPE)));
      assertEquals("rate_limited", attr(first, AttributeKey.stringKey(TelemetryNames.ATTR_ROOMCHAT_ERROR_KIND)));
      assertEquals(StatusCode.ERROR, first.getStatus().getStatusCode());
      assertNull(attr(first, AttributeKey.longKey(TelemetryNames.ATTR_HTTP_REQUEST_RESEND_COUNT)));
      assertEquals(200L, attr(second, AttributeKey.longKey(TelemetryNames.ATTR_HTTP_RESPONSE_STATUS_CODE)));
      assertEquals(1L, attr(second, AttributeKey.longKey(TelemetryNames.ATTR_HTTP_REQUEST_RESEND_COUNT)));
      assertNull(attr(second, AttributeKey.stringKey(TelemetryNames.ATTR_ERROR_TYPE)));

      // Each request carried its own attempt's span as traceparent.
      List<Map<String, String>> sent = sentHeaders(emulator);
      assertEquals(2, sent.size());
      for (int i = 0; i < 2; i++) {
        SpanData a = attempts.get(i);
        assertTrue(sent.get(i).get("traceparent").startsWith("00-" + a.getTraceId() + "-" + a.getSpanId() + "-"), sent.get(i).toString());
      }

      Collection<MetricData> all = metrics.collectAllMetrics();
      MetricData requests = metric(all, TelemetryNames.METRIC_HTTP_CLIENT_REQUEST_DURATION);
      assertEquals("s", requests.getUnit());
      Map<Long, Long> byStatus = requests.getHistogramData().getPoints().stream().collect(Collectors.toMap(
          p -> p.getAttributes().get(AttributeKey.longKey(TelemetryNames.ATTR_HTTP_RESPONSE_STATUS_CODE)), HistogramPointData::getCount));
      assertEquals(Map.of(429L, 1L, 200L, 1L), byStatus);
      for (HistogramPointData p : requests.getHistogramData().getPoints()) {
        assertNull(p.getAttributes().get(AttributeKey.stringKey(TelemetryNames.ATTR_URL_FULL)), "no URL in a metric");
        assertEquals(List.of(0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0), p.getBoundaries());
      }
      MetricData retries = metric(all, TelemetryNames.METRIC_ROOMCHAT_CLIENT_RETRIES);
      LongPointData retried = retries.getLongSumData().getPoints().iterator().next();
      assertEquals(1L, retried.getValue());
      assertEquals("429", retried.getAttributes().get(AttributeKey.stringKey(TelemetryNames.ATTR_ROOMCHAT_RETRY_REASON)));
      MetricData calls = metric(all, TelemetryNames.METRIC_ROOMCHAT_CLIENT_CALL_DURATION);
      assertEquals(1L, calls.getHistogramData().getPoints().iterator().next().getCount());
      MetricData active = metric(all, TelemetryNames.METRIC_ROOMCHAT_CLIENT_ACTIVE_CALLS);
      for (LongPointData p : active.getLongSumData().getPoints()) {
        assertEquals(0L, p.getValue(), "no call in flight once it returned: " + p);
      }
      MetricData remaining = metric(all, TelemetryNames.METRIC_ROOMCHAT_RATE_LIMIT_REMAINING);
      assertEquals(1, remaining.getLongGaugeData().getPoints().size(), "one series for the client");
      LongPointData free = remaining.getLongGaugeData().getPoints().iterator().next();
      assertNotNull(free.getAttributes().get(AttributeKey.longKey(TelemetryNames.ATTR_ROOMCHAT_CLIENT_ID)));
      assertEquals("127.0.0.1", free.getAttributes().get(AttributeKey.stringKey(TelemetryNames.ATTR_SERVER_ADDRESS)));
    }
    // Closed: the client's series is gone.
    MetricData after = metric(metrics.collectAllMetrics(), TelemetryNames.METRIC_ROOMCHAT_RATE_LIMIT_REMAINING);
    assertTrue(after == null || after.getLongGaugeData().getPoints().isEmpty(), "a closed client has no series");
  }

  @Test
  void aFailedCallIsAnErrorWithItsKindAndStatusAndNoSecretAnywhere(RoomchatEmulator emulator) {
    String key = emulator.privateKey();
    emulator.failNext(USERS, 400, "{\"message\":\"bad " + key + "\"}", 1);
    try (RoomchatClient client = emulator.clientBuilder().openTelemetry(sdk).maxRetries(0).build()) {
      RoomchatException e = org.junit.jupiter.api.Assertions.assertThrows(RoomchatException.class, client::listUsers);
      assertEquals(400, e.status());
      SpanData call = named("roomchat list_users").get(0);
      assertEquals(StatusCode.ERROR, call.getStatus().getStatusCode());
      assertEquals("invalid_request (HTTP 400)", call.getStatus().getDescription(), "the kind and status, never the service's text");
      assertEquals("invalid_request", attr(call, AttributeKey.stringKey(TelemetryNames.ATTR_ERROR_TYPE)));
      SpanData attempt = named("GET " + USERS).get(0);
      assertEquals("400", attr(attempt, AttributeKey.stringKey(TelemetryNames.ATTR_ERROR_TYPE)));
      String everything = spans.getFinishedSpanItems().toString() + metrics.collectAllMetrics().toString();
      assertFalse(everything.contains(key), "the private key is in no span or metric");
      assertFalse(everything.contains(emulator.publicKey()), "nor the public key");
      assertTrue(everything.contains("auth=REDACTED"), "url.full shows the key REDACTED");
    }
  }

  @Test
  void propagationTurnedOffSendsNoTraceContextButStillMakesTheSpans(RoomchatEmulator emulator) {
    try (RoomchatClient client = emulator.clientBuilder().openTelemetry(sdk).propagateTraceContext(false).build()) {
      Span parent = sdk.getTracer("app").spanBuilder("handle request").startSpan();
      try (Scope ignored = parent.makeCurrent()) {
        client.listUsers();
      } finally {
        parent.end();
      }
      assertEquals(1, named("GET " + USERS).size());
      Map<String, String> sent = sentHeaders(emulator).get(0);
      assertFalse(sent.containsKey("traceparent"), "no traceparent: " + sent);
      assertFalse(sent.containsKey("baggage"));
    }
  }

  private long activeCalls() {
    MetricData active = metric(metrics.collectAllMetrics(), TelemetryNames.METRIC_ROOMCHAT_CLIENT_ACTIVE_CALLS);
    return active == null ? 0 : active.getLongSumData().getPoints().stream().mapToLong(LongPointData::getValue).sum();
  }

  @Test
  void aCallCountsInFlightFromItsDispatchUntilItReturns(RoomchatEmulator emulator) throws Exception {
    emulator.addFault(Map.of("method", "GET", "path", USERS, "times", 1, "action", Map.of("kind", "hold")));
    try (RoomchatClient client = emulator.clientBuilder().openTelemetry(sdk).build()) {
      CompletableFuture<UserPage> call = client.async().listUsers();
      CancelTest.waitUntil(() -> emulator.held() == 1, "the emulator holds the answer");
      assertEquals(1L, activeCalls(), "the call is in flight while its answer is held");
      emulator.releaseHeld();
      call.get();
      assertEquals(0L, activeCalls());
    }
  }

  @Test
  void aThrowingSpanProcessorOrPropagatorCostsOnlyItsOwnPart(RoomchatEmulator emulator) {
    SpanProcessor throwing = new SpanProcessor() {
      @Override
      public void onStart(Context parentContext, ReadWriteSpan span) {
        if (span.getName().startsWith("roomchat ")) {
          throw new IllegalStateException("a broken processor");
        }
      }

      @Override
      public boolean isStartRequired() {
        return true;
      }

      @Override
      public void onEnd(ReadableSpan span) {
        if (span.getKind() == SpanKind.CLIENT) {
          throw new IllegalStateException("a broken processor");
        }
      }

      @Override
      public boolean isEndRequired() {
        return true;
      }
    };
    TextMapPropagator broken = new TextMapPropagator() {
      @Override
      public Collection<String> fields() {
        return List.of("traceparent");
      }

      @Override
      public <C> void inject(Context context, C carrier, TextMapSetter<C> setter) {
        throw new IllegalStateException("a broken propagator");
      }

      @Override
      public <C> Context extract(Context context, C carrier, io.opentelemetry.context.propagation.TextMapGetter<C> getter) {
        return context;
      }
    };
    sdk.close();
    metrics = InMemoryMetricReader.create();
    sdk = sdk(SpanProcessor.composite(throwing, SimpleSpanProcessor.create(spans)), broken);
    emulator.seedUsers(2);
    try (RoomchatClient client = emulator.clientBuilder().openTelemetry(sdk).build()) {
      assertEquals(2, client.listUsers().data().size(), "the call is not the telemetry's to fail");
      assertEquals(0L, activeCalls(), "and it left the calls in flight");
      Collection<MetricData> all = metrics.collectAllMetrics();
      MetricData calls = metric(all, TelemetryNames.METRIC_ROOMCHAT_CLIENT_CALL_DURATION);
      assertNotNull(calls, "the call's duration is recorded though its span could not be made");
      assertEquals(1L, calls.getHistogramData().getPoints().iterator().next().getCount());
      MetricData requests = metric(all, TelemetryNames.METRIC_HTTP_CLIENT_REQUEST_DURATION);
      assertNotNull(requests, "the attempt's duration is recorded");
      assertEquals(1L, requests.getHistogramData().getPoints().iterator().next().getCount());
      // The baggage propagator beside the broken one still ran: only the broken part was lost.
      assertEquals(1, sentHeaders(emulator).size());
    }
  }

  @Test
  void aWaitForTheRateBudgetIsAnEventAndAMetricAndAViewOfTheClientRecordsToo(RoomchatEmulator emulator) {
    try (RoomchatClient client = emulator.clientBuilder().openTelemetry(sdk).rateLimit(1, java.time.Duration.ofMillis(300)).build()) {
      client.listUsers();
      // The second waits for the budget's next slot; made through a view (per-call options), which shares the observer.
      client.listUsers(ListUsersParams.builder().build(), CallOptions.builder().maxRetries(0).build());
      List<SpanData> calls = named("roomchat list_users");
      assertEquals(2, calls.size());
      SpanData waited = calls.stream().filter(s -> s.getEvents().stream().anyMatch(e -> e.getName().equals(TelemetryNames.EVENT_ROOMCHAT_RATE_LIMIT_WAIT)))
          .findFirst().orElseThrow(() -> new AssertionError("no roomchat.rate_limit.wait event: " + calls));
      EventData wait = waited.getEvents().stream().filter(e -> e.getName().equals(TelemetryNames.EVENT_ROOMCHAT_RATE_LIMIT_WAIT)).findFirst().orElseThrow();
      assertTrue(wait.getAttributes().get(AttributeKey.doubleKey(TelemetryNames.ATTR_ROOMCHAT_WAIT_DURATION)) > 0);
      assertTrue(wait.getAttributes().get(AttributeKey.longKey(TelemetryNames.ATTR_ROOMCHAT_ATTEMPT)) >= 1);
      assertTrue(attr(waited, AttributeKey.doubleKey(TelemetryNames.ATTR_ROOMCHAT_RATE_LIMIT_WAIT_DURATION)) > 0);
      MetricData waits = metric(metrics.collectAllMetrics(), TelemetryNames.METRIC_ROOMCHAT_RATE_LIMIT_WAIT_DURATION);
      assertNotNull(waits, "roomchat.rate_limit.wait.duration is recorded");
      HistogramPointData point = waits.getHistogramData().getPoints().iterator().next();
      long events = calls.stream().flatMap(c -> c.getEvents().stream()).filter(e -> e.getName().equals(TelemetryNames.EVENT_ROOMCHAT_RATE_LIMIT_WAIT)).count();
      assertEquals(events, point.getCount(), "a point per wait event");
      assertEquals("list_users", point.getAttributes().get(AttributeKey.stringKey(TelemetryNames.ATTR_ROOMCHAT_OPERATION)));
      assertEquals(List.of(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0), point.getBoundaries());
    }
  }

  @Test
  void theGlobalOpenTelemetryIsReadOnceItIsSetAndNeverFixedBefore(RoomchatEmulator emulator) {
    GlobalOpenTelemetry.resetForTest();
    try (RoomchatClient client = emulator.clientBuilder().build()) {
      client.listUsers(); // the global is unset: not observed, and not fixed to a no-op
      assertFalse(GlobalOpenTelemetry.isSet());
      GlobalOpenTelemetry.set(sdk);
      client.listUsers();
      assertEquals(1, named("roomchat list_users").size());
      assertEquals(1, named("GET " + USERS).size());
      assertNotNull(sentHeaders(emulator).get(1).get("traceparent"));
      assertNull(sentHeaders(emulator).get(0).get("traceparent"));
    } finally {
      GlobalOpenTelemetry.resetForTest();
    }
  }

  @Test
  void aPageOfAListingIsACallUnderTheSpanCurrentAtNext(RoomchatEmulator emulator) {
    emulator.seedUsers(3);
    try (RoomchatClient client = emulator.clientBuilder().openTelemetry(sdk).build()) {
      Span parent = sdk.getTracer("app").spanBuilder("report").startSpan();
      long users;
      try (Scope ignored = parent.makeCurrent()) {
        users = client.iterListUsers(ListUsersParams.builder().limit(2).build()).stream().count();
      } finally {
        parent.end();
      }
      assertEquals(3, users);
      SpanData app = named("report").get(0);
      List<SpanData> pages = named("roomchat list_users");
      assertTrue(pages.size() >= 2, "a call per page: " + pages.size());
      for (SpanData page : pages) {
        assertEquals(app.getSpanId(), page.getParentSpanId());
      }
      assertEquals(0L, activeCalls());
      Attributes any = pages.get(0).getAttributes();
      assertEquals("list_users", any.get(AttributeKey.stringKey(TelemetryNames.ATTR_ROOMCHAT_OPERATION)));
    }
  }

  /** Runs {@code inCallback} once, on the line saying a call waits for the budget. */
  static final class OnBudgetWait extends org.slf4j.helpers.LegacyAbstractLogger {
    private static final long serialVersionUID = 1L;
    final transient Runnable inCallback;
    final java.util.concurrent.atomic.AtomicBoolean ran = new java.util.concurrent.atomic.AtomicBoolean();

    OnBudgetWait(Runnable inCallback) {
      this.name = "on-budget-wait";
      this.inCallback = inCallback;
    }

    @Override protected String getFullyQualifiedCallerName() { return null; }
    @Override protected void handleNormalizedLoggingCall(org.slf4j.event.Level level, org.slf4j.Marker marker, String pattern, Object[] args, Throwable t) {
      if (org.slf4j.helpers.MessageFormatter.basicArrayFormat(pattern, args).contains("for the rate-limit budget") && ran.compareAndSet(false, true)) {
        inCallback.run();
      }
    }
    @Override public boolean isTraceEnabled() { return false; }
    @Override public boolean isDebugEnabled() { return false; }
    @Override public boolean isInfoEnabled() { return true; }
    @Override public boolean isWarnEnabled() { return true; }
    @Override public boolean isErrorEnabled() { return true; }
  }

  /**
   * A traced call made from a log callback of a traced call, on the same thread, leaves
   * the outer call its telemetry: its attempt's span, its trace context on the wire. (The
   * inner call's end cleared the thread's current call, and the outer's reports after it
   * were dropped.)
   */
  @Test
  void aTracedCallFromALogCallbackLeavesTheOuterCallItsSpans(RoomchatEmulator emulator) {
    try (RoomchatClient other = RoomchatClient.builder("another-key").baseUrl(emulator.baseUrl()).maxRetries(0).openTelemetry(sdk).build()) {
      OnBudgetWait log = new OnBudgetWait(() -> {
        try {
          other.listUsers();
        } catch (RoomchatException e) {
          // The emulator refuses the key: the call was made either way.
        }
      });
      // One call a 2 s window: the second call waits for the budget (whatever the machine's pace), if the first did not.
      try (RoomchatClient client = emulator.clientBuilder().openTelemetry(sdk).rateLimit(1, java.time.Duration.ofSeconds(2)).logger(log).build()) {
        client.listUsers();
        client.listUsers(); // waits for the budget's next slot (or the first did): the log line, the nested call
        assertTrue(log.ran.get(), "the nested call ran");
        List<Map<String, String>> sent = sentHeaders(emulator);
        // The nested call's request (another key's, refused) and the outer two: each carries trace context.
        assertEquals(3, sent.size(), "journal: " + sent);
        for (Map<String, String> headers : sent) {
          assertNotNull(headers.get("traceparent"), "trace context on every request: " + sent);
        }
        List<SpanData> attempts = named("GET " + USERS);
        assertEquals(3, attempts.size(), "an attempt span for each of the three requests: " + attempts);
        List<SpanData> calls = named("roomchat list_users");
        assertEquals(3, calls.size());
        for (SpanData call : calls) {
          assertEquals(1L, attr(call, AttributeKey.longKey(TelemetryNames.ATTR_ROOMCHAT_ATTEMPTS)), "each call saw its attempt: " + call);
        }
      }
    }
  }
}
