package home

import "math"

// Colour conversions as in HA's homeassistant.util.color, so attributes
// (hs_color, rgb_color, xy_color) agree with each other the way a real
// light's do.

func round(v float64, dec int) float64 {
	p := math.Pow(10, float64(dec))
	return math.Round(v*p) / p
}

func rgbToHS(r, g, b float64) [2]float64 {
	r, g, b = r/255, g/255, b/255
	mx := math.Max(r, math.Max(g, b))
	mn := math.Min(r, math.Min(g, b))
	if mx == 0 || mx == mn {
		return [2]float64{0, 0}
	}
	d := mx - mn
	s := d / mx
	var h float64
	switch mx {
	case r:
		h = (g - b) / d
	case g:
		h = 2 + (b-r)/d
	default:
		h = 4 + (r-g)/d
	}
	h = math.Mod(h/6, 1)
	if h < 0 {
		h++
	}
	return [2]float64{round(h*360, 3), round(s*100, 3)}
}

func hsToRGB(hs [2]float64) [3]int {
	h, s := hs[0]/360, hs[1]/100
	i := math.Floor(h * 6)
	f := h*6 - i
	p, q, t := 1-s, 1-s*f, 1-s*(1-f)
	var r, g, b float64
	switch int(i) % 6 {
	case 0:
		r, g, b = 1, t, p
	case 1:
		r, g, b = q, 1, p
	case 2:
		r, g, b = p, 1, t
	case 3:
		r, g, b = p, q, 1
	case 4:
		r, g, b = t, p, 1
	default:
		r, g, b = 1, p, q
	}
	return [3]int{int(math.Round(r * 255)), int(math.Round(g * 255)), int(math.Round(b * 255))}
}

func rgbToXY(rgb [3]int) [2]float64 {
	lin := func(v int) float64 {
		c := float64(v) / 255
		if c > 0.04045 {
			return math.Pow((c+0.055)/1.055, 2.4)
		}
		return c / 12.92
	}
	r, g, b := lin(rgb[0]), lin(rgb[1]), lin(rgb[2])
	x := r*0.664511 + g*0.154324 + b*0.162028
	y := r*0.283881 + g*0.668433 + b*0.047685
	z := r*0.000088 + g*0.072310 + b*0.986039
	sum := x + y + z
	if sum == 0 {
		return [2]float64{0, 0}
	}
	return [2]float64{round(x/sum, 3), round(y/sum, 3)}
}

func xyToRGB(xy [2]float64) [3]int {
	vx, vy := xy[0], xy[1]
	if vy == 0 {
		return [3]int{0, 0, 0}
	}
	Y := 1.0
	X := Y / vy * vx
	Z := Y / vy * (1 - vx - vy)
	r := X*1.656492 - Y*0.354851 - Z*0.255038
	g := -X*0.707196 + Y*1.655397 + Z*0.036152
	b := X*0.051713 - Y*0.121364 + Z*1.011530
	gamma := func(v float64) float64 {
		if v <= 0.0031308 {
			return 12.92 * v
		}
		return 1.055*math.Pow(v, 1/2.4) - 0.055
	}
	r, g, b = math.Max(0, gamma(r)), math.Max(0, gamma(g)), math.Max(0, gamma(b))
	mx := math.Max(r, math.Max(g, b))
	if mx > 1 {
		r, g, b = r/mx, g/mx, b/mx
	}
	return [3]int{int(math.Round(r * 255)), int(math.Round(g * 255)), int(math.Round(b * 255))}
}

// kelvinToRGB is Tanner Helland's approximation (HA's color_temperature_to_rgb).
func kelvinToRGB(k int) [3]int {
	t := float64(k) / 100
	clamp := func(v float64) int { return int(math.Round(math.Max(0, math.Min(255, v)))) }
	var r, g, b float64
	if t <= 66 {
		r = 255
		g = 99.4708025861*math.Log(t) - 161.1195681661
	} else {
		r = 329.698727446 * math.Pow(t-60, -0.1332047592)
		g = 288.1221695283 * math.Pow(t-60, -0.0755148492)
	}
	switch {
	case t >= 66:
		b = 255
	case t <= 19:
		b = 0
	default:
		b = 138.5177312231*math.Log(t-10) - 305.0447927307
	}
	return [3]int{clamp(r), clamp(g), clamp(b)}
}

// xyToKelvin is McCamy's approximation (HA's color_xy_to_temperature).
func xyToKelvin(xy [2]float64) int {
	n := (xy[0] - 0.3320) / (0.1858 - xy[1])
	return int(math.Round(437*n*n*n + 3601*n*n + 6861*n + 5517))
}

// namedColors is the part of the CSS colour table people actually ask for.
var namedColors = map[string][3]int{
	"red": {255, 0, 0}, "green": {0, 128, 0}, "lime": {0, 255, 0}, "blue": {0, 0, 255}, "white": {255, 255, 255},
	"yellow": {255, 255, 0}, "orange": {255, 165, 0}, "purple": {128, 0, 128}, "pink": {255, 192, 203},
	"cyan": {0, 255, 255}, "aqua": {0, 255, 255}, "magenta": {255, 0, 255}, "fuchsia": {255, 0, 255},
	"violet": {238, 130, 238}, "indigo": {75, 0, 130}, "gold": {255, 215, 0}, "teal": {0, 128, 128},
	"turquoise": {64, 224, 208}, "coral": {255, 127, 80}, "salmon": {250, 128, 114}, "crimson": {220, 20, 60},
	"lavender": {230, 230, 250}, "navy": {0, 0, 128}, "skyblue": {135, 206, 235}, "warmwhite": {255, 228, 206},
	"hotpink": {255, 105, 180}, "deepskyblue": {0, 191, 255}, "springgreen": {0, 255, 127}, "tomato": {255, 99, 71},
	"chartreuse": {127, 255, 0}, "seagreen": {46, 139, 87}, "darkorange": {255, 140, 0},
}
