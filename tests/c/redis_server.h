/*
 * A real redis-server for the C tests (test_redis, test_release): a free loopback
 * port, the server started on it and killed. Include after harness.h.
 */
#ifndef ROOMCHAT_TEST_REDIS_SERVER_H
#define ROOMCHAT_TEST_REDIS_SERVER_H

#include <fcntl.h>

static pid_t redis_pid;

static int free_port(void) {
  struct sockaddr_in addr;
  socklen_t len = sizeof addr;
  int port, fd = socket(AF_INET, SOCK_STREAM, 0);
  memset(&addr, 0, sizeof addr);
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, (struct sockaddr *)&addr, sizeof addr);
  getsockname(fd, (struct sockaddr *)&addr, &len);
  port = ntohs(addr.sin_port);
  close(fd);
  return port;
}

static int port_open(int port) {
  struct sockaddr_in addr;
  int ok, fd = socket(AF_INET, SOCK_STREAM, 0);
  memset(&addr, 0, sizeof addr);
  addr.sin_family = AF_INET;
  addr.sin_port = htons((unsigned short)port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ok = connect(fd, (struct sockaddr *)&addr, sizeof addr) == 0;
  close(fd);
  return ok;
}

/* Starts `binary` on `port` (loopback, no persistence), with `password` (NULL: none); 1 once it listens. */
static int redis_start(const char *binary, int port, const char *password) {
  char port_text[16];
  int i;
  snprintf(port_text, sizeof port_text, "%d", port);
  redis_pid = fork();
  if (redis_pid == 0) {
    int null = open("/dev/null", O_RDWR);
    dup2(null, 0);
    dup2(null, 1);
    dup2(null, 2);
    if (password) {
      execlp(binary, binary, "--port", port_text, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--requirepass", password, (char *)NULL);
    } else {
      execlp(binary, binary, "--port", port_text, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             (char *)NULL);
    }
    _exit(127);
  }
  for (i = 0; i < 500; i++) {
    if (port_open(port)) return 1;
    usleep(10000);
  }
  return 0;
}

static void redis_kill(void) {
  if (redis_pid > 0) {
    kill(redis_pid, SIGKILL);
    waitpid(redis_pid, NULL, 0);
    redis_pid = 0;
  }
}

#endif
