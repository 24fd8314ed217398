// A mock transformer inference loop: a small decoder (random weights, nothing loaded) whose
// host code is split into named functions (embed, layer_norm, attention, mlp,
// transformer_layer, forward, generate), so a CPU->GPU flame graph shows which host function
// launched which kernel. Each step runs the whole sequence through the model (no KV cache),
// copies the logits of the last position back and appends the argmax token.
//
// NVTX ranges: one per step ("step"), one per layer inside it ("layer").
// The first step is checked against a plain C++ implementation of the same model.
//
// usage: mock_transformer [--steps N] [--layers L] [--no-check]
//   --no-check skips the reference comparison (the overhead harness: it costs ~0.3 s of CPU)
#include <nvtx3/nvToolsExt.h>

#include <algorithm>
#include <vector>

#include "common.h"

namespace {

constexpr int kSeq = 64;     // tokens in the window
constexpr int kModel = 256;  // model width
constexpr int kHeads = 4;    // attention heads
constexpr int kHeadDim = kModel / kHeads;
constexpr int kHidden = 4 * kModel;  // MLP width
constexpr int kVocab = 512;
constexpr float kNormEps = 1e-5f;
constexpr int kTile = 16;

}  // namespace

// ---------------------------------------------------------------------------------------------
// Kernels
// ---------------------------------------------------------------------------------------------

__global__ void embed_kernel(const int* tokens, const float* table, const float* positions,
                             float* x) {
  int s = blockIdx.x;
  for (int d = threadIdx.x; d < kModel; d += blockDim.x) {
    x[s * kModel + d] = table[tokens[s] * kModel + d] + positions[s * kModel + d];
  }
}

// Sum of `value` over the block (blockDim.x a power of two, at most 1024).
__device__ float block_sum(float value, float* scratch) {
  scratch[threadIdx.x] = value;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) scratch[threadIdx.x] += scratch[threadIdx.x + stride];
    __syncthreads();
  }
  float total = scratch[0];
  __syncthreads();
  return total;
}

__device__ float block_max(float value, float* scratch) {
  scratch[threadIdx.x] = value;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride)
      scratch[threadIdx.x] = fmaxf(scratch[threadIdx.x], scratch[threadIdx.x + stride]);
    __syncthreads();
  }
  float result = scratch[0];
  __syncthreads();
  return result;
}

// One block per row: y = (x - mean) / sqrt(var + eps) * gamma + beta.
__global__ void layer_norm_kernel(const float* x, const float* gamma, const float* beta, float* y,
                                  int width) {
  __shared__ float scratch[1024];
  const float* row = x + blockIdx.x * width;
  float sum = 0;
  for (int d = threadIdx.x; d < width; d += blockDim.x) sum += row[d];
  const float mean = block_sum(sum, scratch) / width;
  float sq = 0;
  for (int d = threadIdx.x; d < width; d += blockDim.x) sq += (row[d] - mean) * (row[d] - mean);
  const float inv_std = rsqrtf(block_sum(sq, scratch) / width + kNormEps);
  for (int d = threadIdx.x; d < width; d += blockDim.x) {
    y[blockIdx.x * width + d] = (row[d] - mean) * inv_std * gamma[d] + beta[d];
  }
}

// C[MxN] = A[MxK] * B[KxN], shared-memory tiles.
__global__ void matmul_kernel(const float* a, const float* b, float* c, int m, int n, int k) {
  __shared__ float tile_a[kTile][kTile];
  __shared__ float tile_b[kTile][kTile];
  const int row = blockIdx.y * kTile + threadIdx.y;
  const int col = blockIdx.x * kTile + threadIdx.x;
  float acc = 0;
  for (int t = 0; t < k; t += kTile) {
    tile_a[threadIdx.y][threadIdx.x] =
        (row < m && t + threadIdx.x < k) ? a[row * k + t + threadIdx.x] : 0.0f;
    tile_b[threadIdx.y][threadIdx.x] =
        (col < n && t + threadIdx.y < k) ? b[(t + threadIdx.y) * n + col] : 0.0f;
    __syncthreads();
    for (int i = 0; i < kTile; ++i) acc += tile_a[threadIdx.y][i] * tile_b[i][threadIdx.x];
    __syncthreads();
  }
  if (row < m && col < n) c[row * n + col] = acc;
}

// Causal multi-head attention. One block per (query position, head); qkv rows hold
// [q | k | v], each kModel wide. blockDim.x == kSeq.
__global__ void multi_head_attention_kernel(const float* qkv, float* out) {
  __shared__ float scratch[kSeq];
  __shared__ float probs[kSeq];
  const int query = blockIdx.x;
  const int head = blockIdx.y;
  const int key = threadIdx.x;
  const float* q = qkv + query * 3 * kModel + head * kHeadDim;
  float score = -INFINITY;
  if (key <= query) {
    const float* k = qkv + key * 3 * kModel + kModel + head * kHeadDim;
    float dot = 0;
    for (int d = 0; d < kHeadDim; ++d) dot += q[d] * k[d];
    score = dot * rsqrtf(static_cast<float>(kHeadDim));
  }
  const float max_score = block_max(score, scratch);
  const float weight = key <= query ? expf(score - max_score) : 0.0f;
  const float total = block_sum(weight, scratch);
  probs[key] = weight / total;
  __syncthreads();
  for (int d = threadIdx.x; d < kHeadDim; d += blockDim.x) {
    float acc = 0;
    for (int j = 0; j <= query; ++j)
      acc += probs[j] * qkv[j * 3 * kModel + 2 * kModel + head * kHeadDim + d];
    out[query * kModel + head * kHeadDim + d] = acc;
  }
}

__device__ __host__ inline float gelu(float x) {
  return 0.5f * x * (1.0f + tanhf(0.7978845608f * (x + 0.044715f * x * x * x)));
}

__global__ void gelu_kernel(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = gelu(x[i]);
}

__global__ void residual_add_kernel(float* x, const float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += y[i];
}

// ---------------------------------------------------------------------------------------------
// Model (host side)
// ---------------------------------------------------------------------------------------------

namespace {

struct LayerWeights {
  std::vector<float> norm1_gamma, norm1_beta, w_qkv, w_out, norm2_gamma, norm2_beta, w_up, w_down;
};

struct HostModel {
  std::vector<float> token_table, positions, final_gamma, final_beta, w_vocab;
  std::vector<LayerWeights> layers;
};

struct DeviceLayer {
  float *norm1_gamma, *norm1_beta, *w_qkv, *w_out, *norm2_gamma, *norm2_beta, *w_up, *w_down;
};

struct DeviceModel {
  float *token_table, *positions, *final_gamma, *final_beta, *w_vocab;
  std::vector<DeviceLayer> layers;
  // Activations.
  int* tokens;
  float *x, *normed, *qkv, *attn, *proj, *hidden, *logits;
};

examples::Summary g_summary;

std::vector<float> RandomMatrix(examples::Lcg& rng, size_t rows, size_t cols) {
  std::vector<float> m(rows * cols);
  const float scale = 1.0f / std::sqrt(static_cast<float>(rows));
  for (float& v : m) v = rng.Uniform(scale);
  return m;
}

std::vector<float> Filled(size_t n, float value) {
  return std::vector<float>(n, value);
}

HostModel MakeHostModel(int num_layers) {
  examples::Lcg rng(2024);
  HostModel m;
  m.token_table = RandomMatrix(rng, kVocab, kModel);
  m.positions = RandomMatrix(rng, kSeq, kModel);
  m.final_gamma = Filled(kModel, 1.0f);
  m.final_beta = Filled(kModel, 0.0f);
  m.w_vocab = RandomMatrix(rng, kModel, kVocab);
  for (int l = 0; l < num_layers; ++l) {
    LayerWeights w;
    w.norm1_gamma = Filled(kModel, 1.0f);
    w.norm1_beta = Filled(kModel, 0.01f);
    w.w_qkv = RandomMatrix(rng, kModel, 3 * kModel);
    w.w_out = RandomMatrix(rng, kModel, kModel);
    w.norm2_gamma = Filled(kModel, 1.0f);
    w.norm2_beta = Filled(kModel, -0.01f);
    w.w_up = RandomMatrix(rng, kModel, kHidden);
    w.w_down = RandomMatrix(rng, kHidden, kModel);
    m.layers.push_back(std::move(w));
  }
  return m;
}

template <class T>
T* Upload(const std::vector<T>& host) {
  T* device = nullptr;
  const size_t bytes = host.size() * sizeof(T);
  CUDA_CHECK(cudaMalloc(&device, bytes));
  CUDA_CHECK(cudaMemcpy(device, host.data(), bytes, cudaMemcpyHostToDevice));
  g_summary.memcpy_bytes += static_cast<long long>(bytes);
  return device;
}

template <class T>
T* Allocate(size_t n) {
  T* device = nullptr;
  CUDA_CHECK(cudaMalloc(&device, n * sizeof(T)));
  return device;
}

DeviceModel UploadModel(const HostModel& h) {
  DeviceModel d;
  d.token_table = Upload(h.token_table);
  d.positions = Upload(h.positions);
  d.final_gamma = Upload(h.final_gamma);
  d.final_beta = Upload(h.final_beta);
  d.w_vocab = Upload(h.w_vocab);
  for (const LayerWeights& w : h.layers) {
    d.layers.push_back({Upload(w.norm1_gamma), Upload(w.norm1_beta), Upload(w.w_qkv),
                        Upload(w.w_out), Upload(w.norm2_gamma), Upload(w.norm2_beta),
                        Upload(w.w_up), Upload(w.w_down)});
  }
  d.tokens = Allocate<int>(kSeq);
  d.x = Allocate<float>(kSeq * kModel);
  d.normed = Allocate<float>(kSeq * kModel);
  d.qkv = Allocate<float>(kSeq * 3 * kModel);
  d.attn = Allocate<float>(kSeq * kModel);
  d.proj = Allocate<float>(kSeq * kModel);
  d.hidden = Allocate<float>(kSeq * kHidden);
  d.logits = Allocate<float>(kVocab);
  // Start from zeroed activations (makes a stale-buffer bug show up as a wrong result).
  CUDA_CHECK(cudaMemset(d.x, 0, kSeq * kModel * sizeof(float)));
  g_summary.memset_bytes += kSeq * kModel * sizeof(float);
  return d;
}

void FreeModel(DeviceModel& d) {
  for (float* p : {d.token_table, d.positions, d.final_gamma, d.final_beta, d.w_vocab, d.x,
                   d.normed, d.qkv, d.attn, d.proj, d.hidden, d.logits}) {
    CUDA_CHECK(cudaFree(p));
  }
  for (DeviceLayer& l : d.layers) {
    for (float* p : {l.norm1_gamma, l.norm1_beta, l.w_qkv, l.w_out, l.norm2_gamma, l.norm2_beta,
                     l.w_up, l.w_down}) {
      CUDA_CHECK(cudaFree(p));
    }
  }
  CUDA_CHECK(cudaFree(d.tokens));
}

void CountKernel() {
  CUDA_CHECK_LAUNCH();
  ++g_summary.kernels;
}

}  // namespace

__attribute__((noinline)) void embed(const DeviceModel& m) {
  embed_kernel<<<kSeq, 256>>>(m.tokens, m.token_table, m.positions, m.x);
  CountKernel();
}

__attribute__((noinline)) void layer_norm(const float* x, const float* gamma, const float* beta,
                                          float* y, int rows) {
  layer_norm_kernel<<<rows, 256>>>(x, gamma, beta, y, kModel);
  CountKernel();
}

__attribute__((noinline)) void matmul(const float* a, const float* b, float* c, int m, int n,
                                      int k) {
  dim3 block(kTile, kTile);
  dim3 grid((n + kTile - 1) / kTile, (m + kTile - 1) / kTile);
  matmul_kernel<<<grid, block>>>(a, b, c, m, n, k);
  CountKernel();
}

__attribute__((noinline)) void residual_add(float* x, const float* y, int n) {
  residual_add_kernel<<<(n + 255) / 256, 256>>>(x, y, n);
  CountKernel();
}

__attribute__((noinline)) void attention(const DeviceModel& m, const DeviceLayer& w) {
  matmul(m.normed, w.w_qkv, m.qkv, kSeq, 3 * kModel, kModel);
  multi_head_attention_kernel<<<dim3(kSeq, kHeads), kSeq>>>(m.qkv, m.attn);
  CountKernel();
  matmul(m.attn, w.w_out, m.proj, kSeq, kModel, kModel);
}

__attribute__((noinline)) void mlp(const DeviceModel& m, const DeviceLayer& w) {
  matmul(m.normed, w.w_up, m.hidden, kSeq, kHidden, kModel);
  gelu_kernel<<<(kSeq * kHidden + 255) / 256, 256>>>(m.hidden, kSeq * kHidden);
  CountKernel();
  matmul(m.hidden, w.w_down, m.proj, kSeq, kModel, kHidden);
}

__attribute__((noinline)) void transformer_layer(const DeviceModel& m, const DeviceLayer& w) {
  layer_norm(m.x, w.norm1_gamma, w.norm1_beta, m.normed, kSeq);
  attention(m, w);
  residual_add(m.x, m.proj, kSeq * kModel);
  layer_norm(m.x, w.norm2_gamma, w.norm2_beta, m.normed, kSeq);
  mlp(m, w);
  residual_add(m.x, m.proj, kSeq * kModel);
}

// Runs the model over the token window; leaves the final normalized activations in m.normed
// and the last position's logits in m.logits.
__attribute__((noinline)) void forward(const DeviceModel& m) {
  embed(m);
  for (const DeviceLayer& w : m.layers) {
    nvtxRangePushA("layer");
    transformer_layer(m, w);
    nvtxRangePop();
    ++g_summary.nvtx_ranges;
  }
  layer_norm(m.x, m.final_gamma, m.final_beta, m.normed, kSeq);
  matmul(m.normed + (kSeq - 1) * kModel, m.w_vocab, m.logits, 1, kVocab, kModel);
}

__attribute__((noinline)) int sample_next_token(const DeviceModel& m, std::vector<float>& logits) {
  CUDA_CHECK(cudaMemcpy(logits.data(), m.logits, kVocab * sizeof(float), cudaMemcpyDeviceToHost));
  g_summary.memcpy_bytes += kVocab * sizeof(float);
  return static_cast<int>(std::max_element(logits.begin(), logits.end()) - logits.begin());
}

// ---------------------------------------------------------------------------------------------
// Reference implementation (plain C++), for checking the first step
// ---------------------------------------------------------------------------------------------

namespace reference {

void LayerNorm(const std::vector<float>& x, const std::vector<float>& gamma,
               const std::vector<float>& beta, std::vector<float>& y) {
  for (int s = 0; s < kSeq; ++s) {
    const float* row = &x[s * kModel];
    double mean = 0, var = 0;
    for (int d = 0; d < kModel; ++d) mean += row[d];
    mean /= kModel;
    for (int d = 0; d < kModel; ++d) var += (row[d] - mean) * (row[d] - mean);
    var /= kModel;
    const double inv_std = 1.0 / std::sqrt(var + kNormEps);
    for (int d = 0; d < kModel; ++d) {
      y[s * kModel + d] = static_cast<float>((row[d] - mean) * inv_std * gamma[d] + beta[d]);
    }
  }
}

void MatMul(const float* a, const std::vector<float>& b, float* c, int m, int n, int k) {
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      double acc = 0;
      for (int t = 0; t < k; ++t) acc += static_cast<double>(a[i * k + t]) * b[t * n + j];
      c[i * n + j] = static_cast<float>(acc);
    }
  }
}

void Attention(const std::vector<float>& qkv, std::vector<float>& out) {
  std::vector<double> probs(kSeq);
  for (int h = 0; h < kHeads; ++h) {
    for (int q = 0; q < kSeq; ++q) {
      double max_score = -1e300;
      for (int k = 0; k <= q; ++k) {
        double dot = 0;
        for (int d = 0; d < kHeadDim; ++d) {
          dot += static_cast<double>(qkv[q * 3 * kModel + h * kHeadDim + d]) *
                 qkv[k * 3 * kModel + kModel + h * kHeadDim + d];
        }
        probs[k] = dot / std::sqrt(static_cast<double>(kHeadDim));
        max_score = std::max(max_score, probs[k]);
      }
      double total = 0;
      for (int k = 0; k <= q; ++k) total += (probs[k] = std::exp(probs[k] - max_score));
      for (int d = 0; d < kHeadDim; ++d) {
        double acc = 0;
        for (int k = 0; k <= q; ++k) {
          acc += probs[k] / total * qkv[k * 3 * kModel + 2 * kModel + h * kHeadDim + d];
        }
        out[q * kModel + h * kHeadDim + d] = static_cast<float>(acc);
      }
    }
  }
}

// Final normalized activations (kSeq x kModel) and last-position logits.
void Forward(const HostModel& m, const std::vector<int>& tokens, std::vector<float>& normed_out,
             std::vector<float>& logits) {
  std::vector<float> x(kSeq * kModel), normed(kSeq * kModel), qkv(kSeq * 3 * kModel),
      attn(kSeq * kModel), proj(kSeq * kModel), hidden(kSeq * kHidden);
  for (int s = 0; s < kSeq; ++s) {
    for (int d = 0; d < kModel; ++d) {
      x[s * kModel + d] = m.token_table[tokens[s] * kModel + d] + m.positions[s * kModel + d];
    }
  }
  for (const LayerWeights& w : m.layers) {
    LayerNorm(x, w.norm1_gamma, w.norm1_beta, normed);
    MatMul(normed.data(), w.w_qkv, qkv.data(), kSeq, 3 * kModel, kModel);
    Attention(qkv, attn);
    MatMul(attn.data(), w.w_out, proj.data(), kSeq, kModel, kModel);
    for (size_t i = 0; i < x.size(); ++i) x[i] += proj[i];
    LayerNorm(x, w.norm2_gamma, w.norm2_beta, normed);
    MatMul(normed.data(), w.w_up, hidden.data(), kSeq, kHidden, kModel);
    for (float& v : hidden) v = gelu(v);
    MatMul(hidden.data(), w.w_down, proj.data(), kSeq, kModel, kHidden);
    for (size_t i = 0; i < x.size(); ++i) x[i] += proj[i];
  }
  LayerNorm(x, m.final_gamma, m.final_beta, normed_out);
  logits.assign(kVocab, 0.0f);
  MatMul(&normed_out[(kSeq - 1) * kModel], m.w_vocab, logits.data(), 1, kVocab, kModel);
}

}  // namespace reference

__attribute__((noinline)) void check_first_step(const HostModel& host, const DeviceModel& m,
                                                const std::vector<int>& tokens,
                                                const std::vector<float>& gpu_logits) {
  std::vector<float> gpu_normed(kSeq * kModel);
  CUDA_CHECK(cudaMemcpy(gpu_normed.data(), m.normed, gpu_normed.size() * sizeof(float),
                        cudaMemcpyDeviceToHost));
  g_summary.memcpy_bytes += static_cast<long long>(gpu_normed.size() * sizeof(float));
  std::vector<float> want_normed(kSeq * kModel), want_logits;
  reference::Forward(host, tokens, want_normed, want_logits);
  if (!examples::AllClose(gpu_normed.data(), want_normed.data(), want_normed.size(), 2e-3f, 2e-3f,
                          "final activations")) {
    examples::DieWrong("transformer activations differ from the reference");
  }
  if (!examples::AllClose(gpu_logits.data(), want_logits.data(), kVocab, 2e-3f, 2e-3f, "logits")) {
    examples::DieWrong("transformer logits differ from the reference");
  }
}

__attribute__((noinline)) void generate(const HostModel& host, const DeviceModel& m, int steps,
                                        bool check) {
  std::vector<int> tokens(kSeq);
  examples::Lcg rng(7);
  for (int& t : tokens) t = static_cast<int>(rng.Next() % kVocab);
  std::vector<float> logits(kVocab);
  for (int step = 0; step < steps; ++step) {
    nvtxRangePushA("step");
    CUDA_CHECK(cudaMemcpy(m.tokens, tokens.data(), kSeq * sizeof(int), cudaMemcpyHostToDevice));
    g_summary.memcpy_bytes += kSeq * sizeof(int);
    forward(m);
    const int next = sample_next_token(m, logits);
    if (step == 0 && check) check_first_step(host, m, tokens, logits);
    // Slide the window: drop the oldest token, append the new one.
    std::rotate(tokens.begin(), tokens.begin() + 1, tokens.end());
    tokens.back() = next;
    nvtxRangePop();
    ++g_summary.nvtx_ranges;
  }
}

int main(int argc, char** argv) {
  const char* usage = "[--steps N] [--layers L] [--no-check]";
  int steps = 20;
  int layers = 4;
  bool check = true;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--steps") == 0 && i + 1 < argc) {
      steps = static_cast<int>(examples::ParsePositive(argv[++i], "--steps"));
    } else if (std::strcmp(argv[i], "--layers") == 0 && i + 1 < argc) {
      layers = static_cast<int>(examples::ParsePositive(argv[++i], "--layers"));
    } else if (std::strcmp(argv[i], "--no-check") == 0) {
      check = false;
    } else {
      examples::DieUsage(argv[0], usage);
    }
  }
  examples::WallTimer timer;
  g_summary.name = EXAMPLE_NAME("mock_transformer");

  HostModel host = MakeHostModel(layers);
  DeviceModel device = UploadModel(host);
  generate(host, device, steps, check);
  CUDA_CHECK(cudaDeviceSynchronize());
  FreeModel(device);

  g_summary.wall_ms = timer.ElapsedMs();
  examples::PrintSummary(g_summary);
  return 0;
}
