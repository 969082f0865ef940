/*
 * Test harness for the C and C++ suites: spawns the emulator binary, reads its
 * first stdout line, talks to its admin API, and counts checks. POSIX only.
 * Header-only so that both suites can include it.
 *
 * The admin API is reached over a plain socket, or, when the emulator serves
 * HTTPS (`--tls`), through the system libcurl trusting the emulator's CA: a
 * suite that talks to a TLS emulator is compiled with
 * -DROOMCHAT_HARNESS_HTTPS and linked with libcurl (`pkg-config libcurl`).
 */
#ifndef ROOMCHAT_TEST_HARNESS_H
#define ROOMCHAT_TEST_HARNESS_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef ROOMCHAT_HARNESS_HTTPS
#include <curl/curl.h>
#endif

static int harness_passed = 0;
static int harness_failed = 0;

#define CHECK(cond)                                                              \
  do {                                                                           \
    if (cond) {                                                                  \
      harness_passed++;                                                          \
    } else {                                                                     \
      harness_failed++;                                                          \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
    }                                                                            \
  } while (0)

typedef struct emulator {
  pid_t pid;
  int stdin_fd;
  char base_url[256];
  char chat_url[256];
  char private_key[256];
  char public_key[256];
  int port;
  /* Over HTTPS (the emulator was started with --tls): the CA's PEM file, which
   * the emulator removes when it stops, and its content (malloc'd), else NULL. */
  int tls;
  char ca_file[512];
  char *ca_pem;
} emulator;

/* Whether this run is the TLS pass (ROOMCHAT_TEST_TLS=1): a suite that honours
 * it starts its emulator with --tls and has every client trust its CA. */
static inline int harness_test_tls(void) {
  const char *value = getenv("ROOMCHAT_TEST_TLS");
  return value && strcmp(value, "1") == 0;
}

/* The whole content of the file at `path` (malloc'd, NUL-terminated), or NULL. */
static inline char *read_whole_file(const char *path) {
  FILE *file = fopen(path, "rb");
  char *data = NULL;
  long size;
  if (!file) return NULL;
  if (fseek(file, 0, SEEK_END) == 0 && (size = ftell(file)) >= 0 && fseek(file, 0, SEEK_SET) == 0) {
    data = (char *)malloc((size_t)size + 1);
    if (data && fread(data, 1, (size_t)size, file) != (size_t)size) {
      free(data);
      data = NULL;
    }
    if (data) data[size] = '\0';
  }
  fclose(file);
  return data;
}

/* Copies the string value of "key" in a flat JSON object into out. */
static inline int json_string_field(const char *json, const char *key, char *out, size_t size) {
  char pattern[128];
  const char *start;
  const char *end;
  snprintf(pattern, sizeof pattern, "\"%s\":\"", key);
  start = strstr(json, pattern);
  if (!start) return 0;
  start += strlen(pattern);
  end = strchr(start, '"');
  if (!end || (size_t)(end - start) >= size) return 0;
  memcpy(out, start, (size_t)(end - start));
  out[end - start] = '\0';
  return 1;
}

/* Starts `binary` with `args` (a NULL-terminated list after the binary). Its
 * stdin is a pipe we hold: closing it stops the emulator, even if we crash. */
static inline int emulator_start(emulator *emu, const char *binary, const char *const *args) {
  int in_pipe[2], out_pipe[2];
  char line[2048];
  size_t used = 0;
  const char *argv[24];
  int argc = 0;
  if (pipe(in_pipe) != 0 || pipe(out_pipe) != 0) return 0;
  argv[argc++] = binary;
  while (args && *args && argc < 23) argv[argc++] = *args++;
  argv[argc] = NULL;
  emu->pid = fork();
  if (emu->pid < 0) return 0;
  if (emu->pid == 0) {
    dup2(in_pipe[0], 0);
    dup2(out_pipe[1], 1);
    close(in_pipe[1]);
    close(out_pipe[0]);
    execv(binary, (char *const *)argv);
    _exit(127);
  }
  close(in_pipe[0]);
  close(out_pipe[1]);
  emu->stdin_fd = in_pipe[1];
  while (used < sizeof line - 1) {
    ssize_t n = read(out_pipe[0], line + used, 1);
    if (n <= 0) break;
    if (line[used] == '\n') break;
    used++;
  }
  line[used] = '\0';
  close(out_pipe[0]);
  if (!json_string_field(line, "base_url", emu->base_url, sizeof emu->base_url) ||
      !json_string_field(line, "chat_url", emu->chat_url, sizeof emu->chat_url) ||
      !json_string_field(line, "private_key", emu->private_key, sizeof emu->private_key) ||
      !json_string_field(line, "public_key", emu->public_key, sizeof emu->public_key)) {
    fprintf(stderr, "emulator did not announce itself: %s\n", line);
    return 0;
  }
  emu->port = atoi(strrchr(emu->base_url, ':') + 1);
  emu->tls = strncmp(emu->base_url, "https://", 8) == 0;
  emu->ca_file[0] = '\0';
  emu->ca_pem = NULL;
  if (emu->tls) {
    if (!json_string_field(line, "ca_file", emu->ca_file, sizeof emu->ca_file) ||
        !(emu->ca_pem = read_whole_file(emu->ca_file))) {
      fprintf(stderr, "emulator serves HTTPS but its CA file cannot be read: %s\n", line);
      return 0;
    }
#ifdef ROOMCHAT_HARNESS_HTTPS
    curl_global_init(CURL_GLOBAL_DEFAULT);
#endif
  }
  return 1;
}

static inline int emulator_stop(emulator *emu) {
  int status = 0;
  close(emu->stdin_fd);
  if (emu->tls) {
    free(emu->ca_pem);
    emu->ca_pem = NULL;
#ifdef ROOMCHAT_HARNESS_HTTPS
    curl_global_cleanup();
#endif
  }
  if (waitpid(emu->pid, &status, 0) != emu->pid) return 0;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

#ifdef ROOMCHAT_HARNESS_HTTPS
typedef struct harness_buffer {
  char *data;
  size_t len;
} harness_buffer;

static inline size_t harness_collect(char *chunk, size_t size, size_t count, void *userdata) {
  harness_buffer *buffer = (harness_buffer *)userdata;
  size_t n = size * count;
  char *grown = (char *)realloc(buffer->data, buffer->len + n + 1);
  if (!grown) return 0;
  memcpy(grown + buffer->len, chunk, n);
  buffer->data = grown;
  buffer->len += n;
  buffer->data[buffer->len] = '\0';
  return n;
}

/* http_request over HTTPS, through libcurl, trusting only the emulator's CA and
 * never a proxy (the suites set proxy variables to test the library). */
static inline int https_request(const emulator *emu, const char *method, const char *path, const char *body,
                                char **body_out) {
  harness_buffer buffer = {NULL, 0};
  struct curl_slist *headers = curl_slist_append(NULL, "Content-Type: application/json");
  char url[2048];
  long status = -1;
  CURL *curl = curl_easy_init();
  if (!curl) {
    curl_slist_free_all(headers);
    return -1;
  }
  snprintf(url, sizeof url, "%s%s", emu->base_url, path);
  curl_easy_setopt(curl, CURLOPT_URL, url);
  curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method);
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  if (body || strcmp(method, "POST") == 0) curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body ? body : "");
  curl_easy_setopt(curl, CURLOPT_CAINFO, emu->ca_file);
  curl_easy_setopt(curl, CURLOPT_NOPROXY, "*");
  curl_easy_setopt(curl, CURLOPT_TIMEOUT, 60L);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, harness_collect);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &buffer);
  if (curl_easy_perform(curl) != CURLE_OK || curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status) != CURLE_OK)
    status = -1;
  curl_easy_cleanup(curl);
  curl_slist_free_all(headers);
  if (body_out) {
    *body_out = buffer.data ? buffer.data : (char *)calloc(1, 1);
  } else {
    free(buffer.data);
  }
  return (int)status;
}
#endif

/* One HTTP/1.1 request to the emulator (Connection: close). Returns the status,
 * or -1; the body (NUL-terminated) goes to a malloc'd *body_out if not NULL.
 * Over HTTPS it goes through libcurl (see the top of this file). */
static inline int http_request(const emulator *emu, const char *method, const char *path, const char *body,
                        char **body_out) {
  struct sockaddr_in addr;
  char head[1024];
  size_t cap = 4096, len = 0;
  char *buf;
  int fd, status = -1;
  ssize_t n;
  const char *sep;
  if (emu->tls) {
#ifdef ROOMCHAT_HARNESS_HTTPS
    return https_request(emu, method, path, body, body_out);
#else
    fprintf(stderr, "the emulator serves HTTPS: compile with -DROOMCHAT_HARNESS_HTTPS and libcurl\n");
    if (body_out) *body_out = (char *)calloc(1, 1);
    return -1;
#endif
  }
  fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  memset(&addr, 0, sizeof addr);
  addr.sin_family = AF_INET;
  addr.sin_port = htons((unsigned short)emu->port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0) {
    close(fd);
    return -1;
  }
  snprintf(head, sizeof head,
           "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: application/json\r\n"
           "Content-Length: %zu\r\n\r\n",
           method, path, body ? strlen(body) : (size_t)0);
  if (write(fd, head, strlen(head)) < 0 || (body && write(fd, body, strlen(body)) < 0)) {
    close(fd);
    return -1;
  }
  buf = (char *)malloc(cap);
  while ((n = read(fd, buf + len, cap - len - 1)) > 0) {
    len += (size_t)n;
    if (len + 1 >= cap) {
      cap *= 2;
      buf = (char *)realloc(buf, cap);
    }
  }
  buf[len] = '\0';
  close(fd);
  if (sscanf(buf, "HTTP/1.1 %d", &status) != 1) status = -1;
  sep = strstr(buf, "\r\n\r\n");
  if (body_out) {
    const char *payload = sep ? sep + 4 : "";
    size_t payload_len = strlen(payload);
    *body_out = (char *)malloc(payload_len + 1);
    memcpy(*body_out, payload, payload_len + 1);
  }
  free(buf);
  return status;
}

/* The unsigned number value of "key" in a flat JSON object, or -1. */
static inline long long json_number_field(const char *json, const char *key) {
  char pattern[128];
  const char *start;
  snprintf(pattern, sizeof pattern, "\"%s\":", key);
  start = strstr(json, pattern);
  if (!start) return -1;
  start += strlen(pattern);
  while (*start == ' ') start++;
  if (*start < '0' || *start > '9') return -1;
  return strtoll(start, NULL, 10);
}

/* How many times `needle` occurs in `haystack`. */
static inline int count_occurrences(const char *haystack, const char *needle) {
  int count = 0;
  const char *at = haystack;
  while ((at = strstr(at, needle)) != NULL) {
    count++;
    at += strlen(needle);
  }
  return count;
}

#endif
