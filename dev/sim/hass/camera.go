package hass

import (
	"bytes"
	"hash/fnv"
	"image"
	"image/color"
	"image/jpeg"
	"time"
)

// cameraImage draws a small real JPEG: sky, ground and a sun whose place
// follows the time of day, so successive stills differ like a live camera's.
func cameraImage(entityID string, now time.Time) ([]byte, error) {
	const w, h = 160, 90
	f := fnv.New32a()
	_, _ = f.Write([]byte(entityID))
	seed := f.Sum32()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	minute := now.Hour()*60 + now.Minute()
	day := minute >= 7*60 && minute < 20*60
	sunX := (minute % (24 * 60)) * w / (24 * 60)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			var c color.RGBA
			switch {
			case y > h*2/3:
				c = color.RGBA{uint8(40 + seed%40), uint8(110 + y%20), 40, 255}
			case day:
				c = color.RGBA{uint8(100 + y), uint8(150 + y), 235, 255}
			default:
				c = color.RGBA{10, 15, uint8(40 + y/2), 255}
			}
			if dx, dy := x-sunX, y-20; dx*dx+dy*dy < 64 {
				c = color.RGBA{255, 220, 90, 255}
				if !day {
					c = color.RGBA{220, 220, 240, 255}
				}
			}
			img.Set(x, y, c)
		}
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 70}); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
