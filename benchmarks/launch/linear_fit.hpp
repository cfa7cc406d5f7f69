// Least-squares line y = intercept + slope * x, e.g. a chain's time against its kernel count:
// the slope is the cost per kernel, the intercept the fixed cost. Pure host code.
//
// chain_fit uses fit_line_relative over log-spaced lengths: timing noise is roughly proportional
// to the time, so an unweighted fit over 1..1000 lets the longest chains decide everything and
// leaves the fixed cost poorly determined. Weights 1/y^2 give every length the same say, and
// the standard errors say how well each parameter is known.
#pragma once
#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <vector>

namespace triaudit {

struct LineFit {
  double intercept = 0, slope = 0, r2 = 0;
  double intercept_se = 0, slope_se = 0;  // standard errors (weighted fit only)
};

// Chain lengths for the fit: 1, 2, 4, ..., 1024.
inline std::vector<double> chain_fit_lengths() {
  std::vector<double> v;
  for (double n = 1; n <= 1024; n *= 2) v.push_back(n);
  return v;
}

inline LineFit fit_line(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() != y.size() || x.size() < 2) throw std::invalid_argument("fit_line: need two or more (x, y) pairs");
  const double n = static_cast<double>(x.size());
  double sx = 0, sy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sx += x[i];
    sy += y[i];
  }
  const double mx = sx / n, my = sy / n;
  double sxx = 0, sxy = 0, syy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sxx += (x[i] - mx) * (x[i] - mx);
    sxy += (x[i] - mx) * (y[i] - my);
    syy += (y[i] - my) * (y[i] - my);
  }
  if (sxx == 0) throw std::invalid_argument("fit_line: all x are equal");
  LineFit f;
  f.slope = sxy / sxx;
  f.intercept = my - f.slope * mx;
  f.r2 = syy == 0 ? 1.0 : (sxy * sxy) / (sxx * syy);
  return f;
}

// Weighted least squares with weights 1/y_i^2 (relative errors), standard errors from the
// weighted residuals (n - 2 degrees of freedom).
inline LineFit fit_line_relative(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() != y.size() || x.size() < 3)
    throw std::invalid_argument("fit_line_relative: need three or more (x, y) pairs");
  double sw = 0, swx = 0, swy = 0;
  std::vector<double> w(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (!(y[i] > 0)) throw std::invalid_argument("fit_line_relative: times must be positive");
    w[i] = 1.0 / (y[i] * y[i]);
    sw += w[i];
    swx += w[i] * x[i];
    swy += w[i] * y[i];
  }
  const double mx = swx / sw, my = swy / sw;
  double sxx = 0, sxy = 0, syy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sxx += w[i] * (x[i] - mx) * (x[i] - mx);
    sxy += w[i] * (x[i] - mx) * (y[i] - my);
    syy += w[i] * (y[i] - my) * (y[i] - my);
  }
  if (sxx == 0) throw std::invalid_argument("fit_line_relative: all x are equal");
  LineFit f;
  f.slope = sxy / sxx;
  f.intercept = my - f.slope * mx;
  f.r2 = syy == 0 ? 1.0 : (sxy * sxy) / (sxx * syy);
  double chi2 = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double r = y[i] - (f.intercept + f.slope * x[i]);
    chi2 += w[i] * r * r;
  }
  const double s2 = chi2 / static_cast<double>(x.size() - 2);  // residual variance scale
  f.slope_se = std::sqrt(s2 / sxx);
  f.intercept_se = std::sqrt(s2 * (1.0 / sw + mx * mx / sxx));
  return f;
}

}  // namespace triaudit
