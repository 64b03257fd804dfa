package home

// demoBlueprintSources are the documents "downloadable" by blueprint/import,
// keyed by the URL HA would fetch (GitHub blob URLs are fetched as raw).
var demoBlueprintSources = map[string]string{
	"https://raw.githubusercontent.com/home-assistant/core/dev/homeassistant/components/automation/blueprints/notify_leaving_zone.yaml":  zoneNotificationBlueprint,
	"https://raw.githubusercontent.com/home-assistant/core/dev/homeassistant/components/script/blueprints/confirmable_notification.yaml": confirmableNotificationBlueprint,
	"https://raw.githubusercontent.com/hamcp/demo-blueprints/main/automation/low_battery_notify.yaml":                                    lowBatteryBlueprint,
	"https://raw.githubusercontent.com/hamcp/demo-blueprints/main/automation/broken.yaml":                                                brokenBlueprint,
	"https://raw.githubusercontent.com/hamcp/demo-blueprints/main/light/not_an_automation.yaml":                                          lightBlueprint,
}

const zoneNotificationBlueprint = `blueprint:
  name: Zone Notification
  description: Send a notification to a device when a person leaves a specific zone.
  domain: automation
  author: Home Assistant
  input:
    person_entity:
      name: Person
      selector:
        entity:
          filter:
            domain: person
    zone_entity:
      name: Zone
      selector:
        entity:
          filter:
            domain: zone
    notify_device:
      name: Device to notify
      description: Device needs to run the official Home Assistant app to receive notifications.
      selector:
        device:
          filter:
            integration: mobile_app

triggers:
  trigger: state
  entity_id: !input person_entity

variables:
  zone_entity: !input zone_entity
  zone_state: "{{ states[zone_entity].name }}"
  person_entity: !input person_entity
  person_name: "{{ states[person_entity].name }}"

conditions:
  condition: template
  value_template: "{{ trigger.from_state.state == zone_state and trigger.to_state.state != zone_state }}"

actions:
  - domain: mobile_app
    type: notify
    device_id: !input notify_device
    message: "{{ person_name }} has left {{ zone_state }}"
`

const confirmableNotificationBlueprint = `blueprint:
  name: Confirmable Notification
  description: >-
    A script that sends an actionable notification with a confirmation before
    running the specified action.
  domain: script
  author: Home Assistant
  input:
    notify_device:
      name: Device to notify
      description: Device needs to run the official Home Assistant app to receive notifications.
      selector:
        device:
          filter:
            integration: mobile_app
    title:
      name: Title
      description: The title of the button shown in the notification.
      default: ""
      selector:
        text:
    message:
      name: Message
      description: The message body
      selector:
        text:
    confirm_action:
      name: Confirmation Action
      description: Action to run when notification is confirmed
      default: []
      selector:
        action:

mode: restart

sequence:
  - alias: "Send notification"
    domain: mobile_app
    type: notify
    device_id: !input notify_device
    title: !input title
    message: !input message
  - alias: "Run the confirm action"
    choose:
      - conditions: "{{ true }}"
        sequence: !input confirm_action
`

const lowBatteryBlueprint = `blueprint:
  name: Low battery notification
  description: Notify when a battery sensor drops below a threshold.
  domain: automation
  author: hamcp demo
  input:
    battery_sensor:
      name: Battery sensor
      selector:
        entity:
          filter:
            device_class: battery
    threshold:
      name: Threshold
      default: 20
      selector:
        number:
          min: 1
          max: 100
          unit_of_measurement: "%"
    notify_service:
      name: Notify action
      default: notify.notify
      selector:
        text:

triggers:
  - trigger: numeric_state
    entity_id: !input battery_sensor
    below: !input threshold

actions:
  - action: persistent_notification.create
    data:
      title: Low battery
      message: "{{ trigger.to_state.name }} is at {{ trigger.to_state.state }}%"
`

// brokenBlueprint lacks the blueprint name, so HA refuses it.
const brokenBlueprint = `blueprint:
  domain: automation
  input: {}
triggers:
  - trigger: homeassistant
    event: start
actions: []
`

// lightBlueprint is for a domain HA keeps no blueprints for.
const lightBlueprint = `blueprint:
  name: Not an automation
  domain: light
triggers: []
`
