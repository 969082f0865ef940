package dev.roomchat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.roomchat.internal.Json;
import dev.roomchat.testing.RoomchatEmulator;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.exporter.otlp.http.metrics.OtlpHttpMetricExporter;
import io.opentelemetry.exporter.otlp.http.trace.OtlpHttpSpanExporter;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.metrics.SdkMeterProvider;
import io.opentelemetry.sdk.metrics.export.PeriodicMetricReader;
import io.opentelemetry.sdk.resources.Resource;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.export.BatchSpanProcessor;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * End to end through a real OpenTelemetry Collector (scripts/otel-collector.sh,
 * built from the pinned Go modules): the package's spans and metrics exported
 * by OpenTelemetry Java's official OTLP exporters (opentelemetry-exporter-otlp,
 * HTTP/protobuf, sent by the JDK's HttpClient) behind a batch span processor
 * and a periodic reader, as an application sets them up; what the collector
 * wrote (OTLP JSON) is asserted: the application's span, the calls, their
 * attempts (one trace, parent ids), the HTTP client conventions' attributes, a
 * 429 resent once, the metrics' points, and no key, token, proxy or Redis
 * password anywhere in the file. The same test as Rust's, Node's, Python's and
 * Go's (tests/otel/README.md).
 *
 * <p>Not a {@code *Test}: the package's own run needs no collector. The test
 * command runs it after the JVM package's build:
 * {@code mvn surefire:test -Dtest=OtelCollectorE2E} (a collector built:
 * {@code bash scripts/otel-collector.sh build}).
 */
class OtelCollectorE2E {
  // The secrets, with the characters URLs and JSON treat apart.
  private static final String PRIVATE_KEY = "sk_live_C0ll?ct#9/x@y+&=%";
  private static final String PUBLIC_KEY = "pk_live_C0ll?ct#p/k@y+&=%";
  private static final String PROXY_PASSWORD = "Pr0xy?#/p@ss&";
  private static final String REDIS_PASSWORD = "R3d?s#9/c@ll&";
  private static final String USERS = "/consumer/api/v2/users";
  private static final String SERVICE = "roomchat-collector-e2e-jvm";
  private static final long KIND_INTERNAL = 1;
  private static final long KIND_CLIENT = 3;
  private static final long STATUS_ERROR = 2;

  private static final HttpClient HTTP = HttpClient.newHttpClient();

  private static Path root() {
    String repo = System.getenv("ROOMCHAT_REPO");
    return (repo != null ? Paths.get(repo) : Paths.get("..", "..")).toAbsolutePath().normalize();
  }

  private static String run(String... command) throws Exception {
    Process p = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertEquals(0, p.waitFor(), String.join(" ", command));
    return out;
  }

  private static void fault(String adminUrl, Map<String, Object> action) throws Exception {
    Map<String, Object> rule = Map.of("method", "GET", "path", USERS, "times", 1, "action", action);
    HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create(adminUrl + "/faults"))
        .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(Json.write(rule))).build(),
        HttpResponse.BodyHandlers.ofString());
    assertEquals(200, r.statusCode(), r.body());
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> map(Object o) {
    return (Map<String, Object>) o;
  }

  @SuppressWarnings("unchecked")
  private static List<Object> list(Object o) {
    return o == null ? List.of() : (List<Object>) o;
  }

  /** OTLP JSON's attributes: 64-bit integers are strings there. */
  private static Map<String, Object> attrs(Object keyValues) {
    Map<String, Object> out = new HashMap<>();
    for (Object kv : list(keyValues)) {
      Map<String, Object> value = map(map(kv).get("value"));
      Object v = value.containsKey("intValue") ? (Object) Long.parseLong(String.valueOf(value.get("intValue")))
          : value.containsKey("stringValue") ? value.get("stringValue")
          : value.containsKey("doubleValue") ? value.get("doubleValue") : value.get("boolValue");
      out.put((String) map(kv).get("key"), v);
    }
    return out;
  }

  private static long number(Object o) {
    return o == null ? 0 : o instanceof Number ? ((Number) o).longValue() : Long.parseLong(String.valueOf(o));
  }

  @Test
  void spansAndMetricsReachARealCollector() throws Exception {
    Path dir = Files.createTempDirectory("roomchat-otelcol-jvm-");
    String script = root().resolve("scripts").resolve("otel-collector.sh").toString();
    Map<String, String> env = new HashMap<>();
    for (String line : run("bash", script, "start", dir.toString()).split("\n")) {
      int eq = line.indexOf('=');
      if (eq > 0) {
        env.put(line.substring(0, eq), line.substring(eq + 1).trim());
      }
    }
    boolean stopped = false;
    Process emulator = new ProcessBuilder(RoomchatEmulator.find().toString(), "--port", "0", "--private-key", PRIVATE_KEY, "--public-key", PUBLIC_KEY)
        .redirectError(ProcessBuilder.Redirect.DISCARD).start();
    try {
      Map<String, Object> ready = map(Json.parse(new BufferedReader(new InputStreamReader(emulator.getInputStream(), StandardCharsets.UTF_8)).readLine()));
      String baseUrl = (String) ready.get("base_url");
      String adminUrl = (String) ready.get("admin_url");
      String endpoint = env.get("ROOMCHAT_OTELCOL_HTTP_ENDPOINT");
      assertNotNull(endpoint, "otel-collector.sh start printed " + env);

      Resource resource = Resource.getDefault().merge(Resource.create(Attributes.of(AttributeKey.stringKey("service.name"), SERVICE)));
      SdkTracerProvider tracerProvider = SdkTracerProvider.builder().setResource(resource)
          .addSpanProcessor(BatchSpanProcessor.builder(OtlpHttpSpanExporter.builder().setEndpoint(endpoint + "/v1/traces").build()).build())
          .build();
      SdkMeterProvider meterProvider = SdkMeterProvider.builder().setResource(resource)
          .registerMetricReader(PeriodicMetricReader.builder(OtlpHttpMetricExporter.builder().setEndpoint(endpoint + "/v1/metrics").build())
              .setInterval(Duration.ofHours(1)).build())
          .build();
      OpenTelemetrySdk sdk = OpenTelemetrySdk.builder().setTracerProvider(tracerProvider).setMeterProvider(meterProvider)
          .setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance())).build();

      String token;
      String appId;
      String traceId;
      // A proxy and a shared Redis budget, each with its password: loopback is
      // not proxied, and no Redis listens on port 1 (the client falls back and says so).
      try (RoomchatClient client = RoomchatClient.builder(PRIVATE_KEY).baseUrl(baseUrl).publicKey(PUBLIC_KEY)
          .openTelemetry(sdk)
          .proxy("https://me:" + URLEncoder.encode(PROXY_PASSWORD, StandardCharsets.UTF_8) + "@127.0.0.1:9")
          .rateLimit(100, Duration.ofMinutes(1))
          .redisBudget("redis://:" + URLEncoder.encode(REDIS_PASSWORD, StandardCharsets.UTF_8) + "@127.0.0.1:1/0")
          .redisPolicy(RoomchatClient.RedisPolicy.LOCAL_FALLBACK, 1)
          .redisTimeouts(Duration.ofMillis(200), Duration.ofMillis(200), null)
          .build()) {
        Span app = sdk.getTracer("app").spanBuilder("handle request").startSpan();
        try (Scope ignored = app.makeCurrent()) {
          token = client.createUser(CreateUserParams.builder().username("jon").build()).accessToken();
          client.validateAccessToken(token);
          // The token in its query too: url.full must show it REDACTED.
          Map<String, Object> raw = new LinkedHashMap<>();
          raw.put("method", "POST");
          raw.put("path", "/consumer/api/v1/user/accessToken/validate");
          raw.put("query", List.of(List.of("accessToken", token)));
          raw.put("body", Map.of("accessToken", token));
          raw.put("auth", "public_key");
          client.call("raw", raw);
          // A 429 then a 200: two attempts, the second resent once.
          fault(adminUrl, Map.of("kind", "respond", "status", 429, "headers", Map.of("Retry-After", "0"), "body", "{\"message\":\"slow down\"}"));
          client.listUsers(ListUsersParams.builder().limit(5).build());
          // A failed call whose answer quotes the keys and the token.
          fault(adminUrl, Map.of("kind", "respond", "status", 400, "body",
              Json.write(Map.of("message", "bad key " + PRIVATE_KEY + " / " + PUBLIC_KEY + " / " + token))));
          assertThrows(InvalidRequestException.class, () -> client.listUsers(ListUsersParams.builder().limit(1).build()));
        } finally {
          app.end();
        }
        appId = app.getSpanContext().getSpanId();
        traceId = app.getSpanContext().getTraceId();
        // Everything exported (the client alive: its budget's gauge is observed), then the collector stopped.
        assertTrue(tracerProvider.shutdown().join(30, TimeUnit.SECONDS).isSuccess(), "spans exported");
        assertTrue(meterProvider.shutdown().join(30, TimeUnit.SECONDS).isSuccess(), "metrics exported");
      }
      run("bash", script, "stop", dir.toString());
      stopped = true;
      String received = Files.readString(Paths.get(env.get("ROOMCHAT_OTELCOL_OUTPUT")));

      List<Map<String, Object>> spans = new ArrayList<>();
      List<Map<String, Object>> lastMetrics = new ArrayList<>();
      for (String line : received.split("\n")) {
        if (line.isBlank()) {
          continue;
        }
        Map<String, Object> batch = map(Json.parse(line));
        for (Object rs : list(batch.get("resourceSpans"))) {
          assertEquals(SERVICE, attrs(map(map(rs).get("resource")).get("attributes")).get("service.name"));
          for (Object ss : list(map(rs).get("scopeSpans"))) {
            String scope = (String) map(map(ss).get("scope")).get("name");
            for (Object s : list(map(ss).get("spans"))) {
              Map<String, Object> span = new HashMap<>(map(s));
              span.put("scope", scope);
              spans.add(span);
            }
          }
        }
        if (!list(batch.get("resourceMetrics")).isEmpty()) {
          lastMetrics.clear();
          for (Object rm : list(batch.get("resourceMetrics"))) {
            for (Object sm : list(map(rm).get("scopeMetrics"))) {
              if ("roomchat".equals(map(map(sm).get("scope")).get("name"))) {
                for (Object m : list(map(sm).get("metrics"))) {
                  lastMetrics.add(map(m));
                }
              }
            }
          }
        }
      }

      // Spans: one trace, app, the calls, their attempts.
      List<Map<String, Object>> calls = new ArrayList<>();
      Map<String, Integer> names = new HashMap<>();
      Map<String, List<Map<String, Object>>> attemptsOf = new HashMap<>();
      int clientSpans = 0;
      for (Map<String, Object> s : spans) {
        assertEquals(traceId, s.get("traceId"), "span " + s.get("name") + " in another trace");
        String scope = (String) s.get("scope");
        assertTrue(scope.equals("app") || scope.equals("roomchat"), "scope " + scope);
        if (!scope.equals("roomchat")) {
          continue;
        }
        long kind = number(s.get("kind"));
        if (kind == KIND_INTERNAL) {
          calls.add(s);
          assertEquals(appId, s.get("parentSpanId"), "a call under the application's span");
          names.merge((String) s.get("name"), 1, Integer::sum);
        } else if (kind == KIND_CLIENT) {
          clientSpans++;
          attemptsOf.computeIfAbsent((String) s.get("parentSpanId"), k -> new ArrayList<>()).add(s);
          Map<String, Object> a = attrs(s.get("attributes"));
          for (String key : List.of("http.request.method", "server.address", "server.port", "url.full")) {
            assertTrue(a.containsKey(key), s.get("name") + " has no " + key);
          }
          assertEquals("1.1", a.get("network.protocol.version"));
        } else {
          throw new AssertionError("span " + s.get("name") + " of kind " + kind);
        }
      }
      assertEquals(Map.of("roomchat list_users", 2, "roomchat create_user", 1, "roomchat validate_access_token", 1, "roomchat raw", 1), names);
      int retried = 0;
      int failed = 0;
      int degraded = 0;
      for (Map<String, Object> call : calls) {
        List<Map<String, Object>> attempts = attemptsOf.getOrDefault((String) call.get("spanId"), List.of());
        Map<String, Object> a = attrs(call.get("attributes"));
        assertEquals((long) attempts.size(), a.get("roomchat.attempts"), "attempt spans of " + call.get("name"));
        List<Object> events = list(call.get("events"));
        for (Object e : events) {
          if ("roomchat.budget.degraded".equals(map(e).get("name"))) {
            degraded++;
          }
        }
        if (attempts.size() == 2) {
          retried++;
          Map<String, Object> first = attempts.get(0);
          Map<String, Object> second = attempts.get(1);
          if (!Long.valueOf(429).equals(attrs(first.get("attributes")).get("http.response.status_code"))) {
            Map<String, Object> t = first;
            first = second;
            second = t;
          }
          Map<String, Object> fa = attrs(first.get("attributes"));
          Map<String, Object> sa = attrs(second.get("attributes"));
          assertEquals("roomchat list_users", call.get("name"));
          assertEquals("GET " + USERS, first.get("name"));
          assertEquals(429L, fa.get("http.response.status_code"));
          assertEquals("429", fa.get("error.type"));
          assertEquals("rate_limited", fa.get("roomchat.error.kind"));
          assertEquals(STATUS_ERROR, number(map(first.get("status")).get("code")));
          assertFalse(fa.containsKey("http.request.resend_count"));
          assertEquals(200L, sa.get("http.response.status_code"));
          assertEquals(1L, sa.get("http.request.resend_count"));
          assertTrue(events.stream().anyMatch(e -> "roomchat.retry".equals(map(e).get("name"))
              && "429".equals(attrs(map(e).get("attributes")).get("roomchat.retry.reason"))), "a roomchat.retry event: " + events);
        }
        if (number(map(call.get("status")).get("code")) == STATUS_ERROR) {
          failed++;
          assertEquals("invalid_request", a.get("error.type"));
          assertEquals("invalid_request (HTTP 400)", map(call.get("status")).get("message"));
        }
        if ("roomchat raw".equals(call.get("name"))) {
          for (Map<String, Object> attempt : attempts) {
            String full = (String) attrs(attempt.get("attributes")).get("url.full");
            assertTrue(full.endsWith("/consumer/api/v1/user/accessToken/validate?publicKey=REDACTED&accessToken=REDACTED"), full);
          }
        }
      }
      assertEquals(1, retried);
      assertEquals(1, failed);
      assertTrue(degraded > 0, "a roomchat.budget.degraded event");

      // Metrics: the last batch.
      Map<String, Map<String, Object>> metrics = new HashMap<>();
      for (Map<String, Object> m : lastMetrics) {
        metrics.put((String) m.get("name"), m);
      }
      Map<String, Object> request = metrics.get("http.client.request.duration");
      assertNotNull(request);
      assertEquals("s", request.get("unit"));
      Map<Long, Long> countByStatus = new HashMap<>();
      long total = 0;
      for (Object p : list(map(request.get("histogram")).get("dataPoints"))) {
        Map<String, Object> a = attrs(map(p).get("attributes"));
        long n = number(map(p).get("count"));
        total += n;
        if (USERS.equals(a.get("url.template"))) {
          countByStatus.merge((Long) a.get("http.response.status_code"), n, Long::sum);
        }
        assertFalse(a.containsKey("url.full"), "a request duration point carries url.full");
        assertEquals("[0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10]",
            list(map(p).get("explicitBounds")).stream().map(b -> {
              double d = ((Number) b).doubleValue();
              return d == Math.rint(d) ? Long.toString((long) d) : Double.toString(d);
            }).collect(java.util.stream.Collectors.toList()).toString());
      }
      assertEquals(clientSpans, total, "a request duration per CLIENT span");
      assertEquals(Map.of(429L, 1L, 200L, 1L, 400L, 1L), countByStatus);
      List<Object> retries = list(map(metrics.get("roomchat.client.retries").get("sum")).get("dataPoints"));
      assertEquals(1, retries.size());
      assertEquals(1L, number(map(retries.get(0)).get("asInt")));
      assertEquals("429", attrs(map(retries.get(0)).get("attributes")).get("roomchat.retry.reason"));
      long callCount = 0;
      for (Object p : list(map(metrics.get("roomchat.client.call.duration").get("histogram")).get("dataPoints"))) {
        callCount += number(map(p).get("count"));
      }
      assertEquals(5, callCount);
      List<Object> gauge = list(map(metrics.get("roomchat.rate_limit.remaining").get("gauge")).get("dataPoints"));
      assertEquals(1, gauge.size());
      assertTrue(attrs(map(gauge.get(0)).get("attributes")).containsKey("roomchat.client.id"));
      assertNotNull(metrics.get("roomchat.budget.degraded"));

      // No secret, raw or percent-encoded, in the file as written nor decoded.
      StringBuilder decoded = new StringBuilder();
      for (Map<String, Object> s : spans) {
        decoded.append(s.get("name")).append('\n').append(map(s.get("status")).get("message")).append('\n');
        attrs(s.get("attributes")).values().forEach(v -> decoded.append(v).append('\n'));
        for (Object e : list(s.get("events"))) {
          attrs(map(e).get("attributes")).values().forEach(v -> decoded.append(v).append('\n'));
        }
      }
      for (String secret : List.of(PRIVATE_KEY, PUBLIC_KEY, token, PROXY_PASSWORD, REDIS_PASSWORD)) {
        for (String form : List.of(secret, URLEncoder.encode(secret, StandardCharsets.UTF_8), URLEncoder.encode(secret, StandardCharsets.UTF_8).replace("+", "%20"))) {
          assertFalse(received.contains(form) || decoded.toString().contains(form), "a secret (" + secret.length() + " characters) reached the collector");
        }
      }
      int points = 0;
      for (Map<String, Object> m : lastMetrics) {
        for (String kind : List.of("histogram", "sum", "gauge")) {
          if (m.get(kind) != null) {
            points += list(map(m.get(kind)).get("dataPoints")).size();
          }
        }
      }
      System.out.printf("otel e2e jvm: the collector received %d spans (%d calls, %d CLIENT) and %d metric points (%d metrics) over OTLP/HTTP; no key, token, proxy or Redis password in its %d bytes%n",
          spans.size(), calls.size(), clientSpans, points, lastMetrics.size(), received.length());
    } finally {
      emulator.getOutputStream().close();
      if (!emulator.waitFor(10, TimeUnit.SECONDS)) {
        emulator.destroy();
      }
      if (!stopped) {
        run("bash", script, "stop", dir.toString());
      }
    }
  }
}
