#include "cli/terminal.h"

#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace gpuperf::cli {
namespace {

std::atomic<bool> g_stop{false};
std::atomic<bool> g_resized{false};

void OnStop(int) {
  g_stop.store(true);
}
void OnResize(int) {
  g_resized.store(true);
}

void WriteAll(const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(STDOUT_FILENO, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the terminal went away: nothing to paint on
    done += static_cast<size_t>(n);
  }
}

}  // namespace

void InstallStopSignals() {
  struct sigaction action;
  std::memset(&action, 0, sizeof(action));
  sigemptyset(&action.sa_mask);
  action.sa_handler = OnStop;
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &action, nullptr);
  action.sa_handler = OnResize;
  sigaction(SIGWINCH, &action, nullptr);
  // A client that hangs up mid-reply must not end the server.
  signal(SIGPIPE, SIG_IGN);
}

bool StopRequested() {
  return g_stop.load();
}

const std::atomic<bool>& StopFlag() {
  return g_stop;
}

bool TakeResized() {
  return g_resized.exchange(false);
}

Terminal::Terminal() {
  keys_ = isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &saved_) == 0;
  if (keys_) {
    termios raw = saved_;
    raw.c_lflag &= ~static_cast<tcflag_t>(ICANON | ECHO);
    raw.c_cc[VMIN] = 0;
    raw.c_cc[VTIME] = 0;
    tcsetattr(STDIN_FILENO, TCSANOW, &raw);
  }
  WriteAll("\x1b[?1049h\x1b[?25l");  // alternate screen, hide the cursor
}

Terminal::~Terminal() {
  WriteAll("\x1b[?25h\x1b[?1049l");
  if (keys_) tcsetattr(STDIN_FILENO, TCSANOW, &saved_);
}

void Terminal::Size(size_t* rows, size_t* columns) const {
  winsize size{};
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_row > 0 && size.ws_col > 0) {
    *rows = size.ws_row;
    *columns = size.ws_col;
  } else {
    *rows = 24;
    *columns = 80;
  }
}

void Terminal::Paint(const std::vector<std::string>& lines) const {
  // Home, then each line over the old one with the rest of it cleared, then everything
  // below: no flicker from clearing the whole screen first.
  std::string frame = "\x1b[H";
  for (size_t i = 0; i < lines.size(); ++i) {
    frame += lines[i];
    frame += "\x1b[K";
    if (i + 1 < lines.size()) frame += "\r\n";
  }
  frame += "\x1b[J";
  WriteAll(frame);
}

int Terminal::WaitKey(int timeout_ms) const {
  if (!keys_) {
    poll(nullptr, 0, timeout_ms);  // returns early on a signal
    return 0;
  }
  pollfd p{STDIN_FILENO, POLLIN, 0};
  if (poll(&p, 1, timeout_ms) <= 0) return 0;
  unsigned char key = 0;
  if (read(STDIN_FILENO, &key, 1) == 1) return key;
  // The terminal hung up (an ssh session dropped): as good as a quit.
  return (p.revents & (POLLHUP | POLLERR)) ? 'q' : 0;
}

}  // namespace gpuperf::cli
