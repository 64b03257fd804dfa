package home

// demoConfigs are written to the config dir when the files do not exist,
// in the form HA's editor writes them.
var demoConfigs = map[string]string{
	"automation": `- id: '1714000000001'
  alias: Hallway light on motion
  description: Turn on the hallway light when motion is detected after dark
  triggers:
  - trigger: state
    entity_id: binary_sensor.hallway_motion
    to: 'on'
  conditions:
  - condition: state
    entity_id: sun.sun
    state: below_horizon
  actions:
  - action: light.turn_on
    target:
      entity_id: light.hallway
    data:
      brightness_pct: 60
  mode: restart
- id: '1714000000002'
  alias: Lock up at night
  description: Lock every door and close the bedroom blinds at 23:00
  triggers:
  - trigger: time
    at: '23:00:00'
  conditions: []
  actions:
  - action: lock.lock
    target:
      label_id: night
  - action: cover.close_cover
    target:
      entity_id: cover.bedroom_blinds
  mode: single
- id: '1714000000003'
  alias: Water the garden
  description: ''
  triggers:
  - trigger: sun
    event: sunset
  conditions:
  - condition: numeric_state
    entity_id: sensor.outdoor_temperature
    above: 12
  actions:
  - action: switch.turn_on
    target:
      entity_id: switch.garden_irrigation
  - delay:
      minutes: 15
  - action: switch.turn_off
    target:
      entity_id: switch.garden_irrigation
  mode: single
- id: '1714000000004'
  alias: Laundry done
  description: Tell Alex when the washing machine has finished
  triggers:
  - trigger: numeric_state
    entity_id: sensor.washing_machine_power
    below: 5
    for:
      minutes: 2
  actions:
  - action: notify.mobile_app_alex_phone
    data:
      title: Laundry
      message: The washing machine is done.
  mode: single
- id: '1714000000005'
  alias: Good morning
  description: Open the blinds and start the day on weekdays
  triggers:
  - trigger: time
    at: 07:00:00
  conditions:
  - condition: time
    weekday:
    - mon
    - tue
    - wed
    - thu
    - fri
  actions:
  - action: cover.open_cover
    target:
      entity_id: cover.living_room_blinds
  - action: light.turn_on
    target:
      entity_id: light.kitchen_ceiling
    data:
      color_temp_kelvin: 4000
      brightness_pct: 80
  - action: media_player.media_play
    target:
      entity_id: media_player.kitchen_speaker
  mode: single
  initial_state: false
`,
	"script": `good_night:
  alias: Good night
  icon: mdi:weather-night
  sequence:
  - action: light.turn_off
    target:
      floor_id: ground_floor
  - action: lock.lock
    target:
      label_id: night
  - action: climate.set_temperature
    target:
      entity_id: climate.bedroom
    data:
      temperature: '{{ states(''input_number.night_temperature'') | float(18) }}'
  - action: input_select.select_option
    target:
      entity_id: input_select.house_mode
    data:
      option: Night
  mode: single
movie_time:
  alias: Movie time
  icon: mdi:movie-open
  sequence:
  - action: scene.turn_on
    target:
      entity_id: scene.movie_night
  - action: media_player.select_source
    target:
      entity_id: media_player.living_room_tv
    data:
      source: Netflix
  mode: single
leave_home:
  alias: Leave home
  description: Turn everything off, lock up and tell the phones
  fields:
    message:
      name: Message
      description: Text sent to the phones
      example: Bye!
      selector:
        text: {}
  sequence:
  - action: light.turn_off
    target:
      entity_id: all
  - action: lock.lock
    target:
      entity_id:
      - lock.front_door
      - lock.back_door
  - action: input_select.select_option
    target:
      entity_id: input_select.house_mode
    data:
      option: Away
  - action: notify.notify
    data:
      message: '{{ message | default(''Everything is off and locked.'') }}'
  mode: single
`,
	"scene": `- id: '1714000000101'
  name: Movie night
  icon: mdi:movie
  entities:
    light.living_room_lamp:
      state: 'on'
      brightness: 60
      color_temp_kelvin: 2700
    light.living_room_ceiling:
      state: 'off'
    cover.living_room_blinds:
      state: closed
      current_position: 0
    media_player.living_room_tv:
      state: 'on'
- id: '1714000000102'
  name: Relax
  icon: mdi:sofa
  entities:
    light.living_room_lamp:
      state: 'on'
      brightness: 150
      rgb_color:
      - 255
      - 147
      - 41
    light.dining_table:
      state: 'on'
      brightness: 100
    media_player.kitchen_speaker:
      state: playing
      volume_level: 0.25
- id: '1714000000103'
  name: All off downstairs
  entities:
    light.kitchen_ceiling: 'off'
    light.kitchen_island: 'off'
    light.living_room_lamp: 'off'
    light.living_room_ceiling: 'off'
    light.dining_table: 'off'
    light.hallway: 'off'
    light.office_desk: 'off'
`,
}
